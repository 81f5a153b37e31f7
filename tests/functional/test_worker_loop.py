"""The worker's loop on moto: slots receive, run and delete; a stop lets the running job finish,
gives back what did not start, and interrupts what outlives the grace period."""

from __future__ import annotations

import io
import json
import threading
import time
from typing import TYPE_CHECKING, Any

import boto3
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws

from constructs_fifo.runtime.claim.store import ClaimOutcome, ClaimStore
from constructs_fifo.runtime.constants import STATUS_SUCCEEDED
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.worker.loop import CLEANUP_SECONDS, QueueTarget, Worker
from constructs_fifo.worker.protection import ScaleInProtection

from .runtime_harness import QUEUE_ARN, REGION, TABLE_NAME, FakeClock, body, create_tables
from .worker_harness import SlotHarness

if TYPE_CHECKING:
    from collections.abc import Callable

    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

#: A bound on waiting for the worker threads in these tests (never reached when the code is right).
_PATIENCE_S = 30


def _send(sqs: SQSClient, queue_url: str, job_id: str, group: str) -> None:
    sqs.send_message(
        QueueUrl=queue_url, MessageBody=body(job_id), MessageGroupId=group, MessageDeduplicationId=job_id
    )


def _worker(
    harnesses: list[SlotHarness],
    queue_url: str,
    *,
    grace_seconds: float = 5,
    batch_size: int = 10,
    cleanup_seconds: float = CLEANUP_SECONDS,
) -> tuple[Worker, io.StringIO]:
    stream = io.StringIO()
    log = JobLogger("Test", stream=stream)
    worker = Worker(
        QueueTarget(queue_url, QUEUE_ARN, REGION),
        [h.slot for h in harnesses],
        batch_size=batch_size,
        logger=log,
        protection=ScaleInProtection(None, on_event=log.event),
        grace_seconds=grace_seconds,
        wait_time_seconds=1,
        clock=harnesses[0].clock,
        cleanup_seconds=cleanup_seconds,
    )
    return worker, stream


def _start(worker: Worker) -> tuple[threading.Thread, list[int]]:
    codes: list[int] = []
    thread = threading.Thread(target=lambda: codes.append(worker.run()), daemon=True)
    thread.start()
    return thread, codes


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + _PATIENCE_S
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def _messages_left(sqs: SQSClient, queue_url: str) -> int:
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def test_slots_run_every_job_once_in_group_order_and_delete_it(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN 9 jobs in 3 groups and a worker of 2 slots
    effects: list[tuple[str, str]] = []
    lock = threading.Lock()

    def handle(job: Job, context: Any) -> None:
        with lock:
            effects.append((job.group, job.id))

    clock = FakeClock()
    harnesses = [SlotHarness(dynamodb, sqs, queue_url, handle, clock=clock) for _ in range(2)]
    for n in range(9):
        _send(sqs, queue_url, f"j{n}", group=f"g{n % 3}")
    worker, _ = _worker(harnesses, queue_url, batch_size=2)
    # WHEN it runs until every job ran, then stops
    thread, codes = _start(worker)
    _wait_for(lambda: len(effects) >= 9)
    worker.stop()
    thread.join(_PATIENCE_S)
    # THEN each job ran once, each group in its order, nothing is left in the queue, and it exited 0
    assert sorted(effects) == sorted((f"g{n % 3}", f"j{n}") for n in range(9))
    for g in range(3):
        assert [j for group, j in effects if group == f"g{g}"] == [f"j{n}" for n in range(9) if n % 3 == g]
    assert _messages_left(sqs, queue_url) == 0
    assert codes == [0]


def test_a_stop_lets_the_running_job_finish_and_gives_back_what_did_not_start(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN one slot running j1 of a batch that also holds j2 (another group)
    running, finish = threading.Event(), threading.Event()
    ran: list[str] = []

    def handle(job: Job, context: Any) -> None:
        ran.append(job.id)
        running.set()
        finish.wait(_PATIENCE_S)

    harness = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1", "g1")
    _send(sqs, queue_url, "j2", "g2")
    worker, _ = _worker([harness], queue_url)
    thread, codes = _start(worker)
    running.wait(_PATIENCE_S)
    # WHEN the worker is stopped (SIGTERM) and the running job then finishes within the grace period
    worker.stop()
    finish.set()
    thread.join(_PATIENCE_S)
    # THEN j1 succeeded and was deleted, j2 did not start and is visible at once, and the worker exited 0
    assert ran == ["j1"]
    assert (ClaimStore(TABLE_NAME, dynamodb).get("j1") or {})["status"] == STATUS_SUCCEEDED
    back = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get(
        "Messages", []
    )
    assert [json.loads(m["Body"])["jobId"] for m in back] == ["j2"]
    assert codes == [0]


def test_a_job_outliving_the_grace_period_is_interrupted_and_given_back_without_an_attempt(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN one slot running a job that will not finish within the grace period
    running, finish = threading.Event(), threading.Event()
    told: list[bool] = []

    def handle(job: Job, context: Any) -> None:
        running.set()
        finish.wait(_PATIENCE_S)
        told.append(context.cancelled.is_set())

    harness = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1", "g1")
    worker, stream = _worker([harness], queue_url, grace_seconds=0.2)
    thread, codes = _start(worker)
    running.wait(_PATIENCE_S)
    # WHEN the worker is stopped and the grace period ends with the job running
    worker.stop()
    thread.join(_PATIENCE_S)
    # THEN the worker exited 0, the record is visible again at once and its next claim is attempt 1 again:
    # a stop is not a failure
    assert codes == [0]
    back = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=0).get("Messages", [])
    assert len(back) == 1
    harness.clock.advance(0.01)
    job = Job(id="j1", type="apply_patch", payload={}, group="g1", message_id="m", attempt=1, body={})
    retry = ClaimStore(TABLE_NAME, dynamodb, clock=harness.clock).claim(job, lease_ms=1000)
    assert (retry.outcome, retry.attempt) == (ClaimOutcome.ACQUIRED, 1)
    # AND the job, once it returns, was told it was cancelled
    finish.set()
    _wait_for(lambda: bool(told))
    assert told == [True]
    assert '"interrupted":1' in stream.getvalue()


def test_an_interrupted_run_keeps_its_claim_and_records_until_its_cleanup_moment_ended(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN one slot running a job that outlives the grace period and, once told, cleans up until the
    # test lets it end (within the worker's cleanup moment)
    started, told, finish = threading.Event(), threading.Event(), threading.Event()

    def handle(job: Job, context: Any) -> None:
        started.set()
        context.cancelled.wait(_PATIENCE_S)
        told.set()
        finish.wait(_PATIENCE_S)

    harness = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1", "g1")
    worker, _ = _worker([harness], queue_url, grace_seconds=0.2, cleanup_seconds=_PATIENCE_S)
    thread, codes = _start(worker)
    # WHEN the worker is stopped and the grace period ends with the job running: it is told
    # (the job itself started: a stop while the batch is before its claim gives the record back at once)
    _wait_for(started.is_set)
    worker.stop()
    _wait_for(told.is_set)
    # THEN while it cleans up no retry may start: its record is not received, its claim not retaken
    job = Job(id="j1", type="apply_patch", payload={}, group="g1", message_id="m", attempt=1, body={})
    other = ClaimStore(TABLE_NAME, dynamodb, clock=harness.clock)
    assert sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=0).get("Messages", []) == []
    assert other.claim(job, lease_ms=1000).outcome is ClaimOutcome.CONFLICT
    # AND once it ended (the worker stopped its children then), both are given back: attempt 1 again
    finish.set()
    thread.join(_PATIENCE_S)
    assert codes == [0]
    assert len(sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=0).get("Messages", [])) == 1
    retry = other.claim(job, lease_ms=1000)
    assert (retry.outcome, retry.attempt) == (ClaimOutcome.ACQUIRED, 1)


def test_the_worker_starts_each_slots_ticker_once_and_its_stop_stops_them(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a worker of 2 slots with real tickers (every 50 ms), and jobs in 4 groups, the first of which
    # waits until its claim was renewed
    renewed = threading.Event()

    def handle(job: Job, context: Any) -> None:
        if job.id != "j0":
            return
        first = (ClaimStore(TABLE_NAME, dynamodb).get(job.id) or {})["updated_at"]
        clock.advance(5)
        for _ in range(2000):  # bounded: a ticker renews within a few of its 50 ms intervals
            if (ClaimStore(TABLE_NAME, dynamodb).get(job.id) or {})["updated_at"] != first:
                renewed.set()
                return
            time.sleep(0.01)

    clock = FakeClock()
    harnesses = [
        SlotHarness(dynamodb, sqs, queue_url, handle, clock=clock, interval_seconds=0.05, ticker=True)
        for _ in range(2)
    ]
    for n in range(8):
        _send(sqs, queue_url, f"j{n}", group=f"g{n % 4}")
    worker, _ = _worker(harnesses, queue_url, batch_size=2)
    # WHEN it runs until every job ran, then is stopped (SIGTERM's handler)
    thread, codes = _start(worker)
    _wait_for(lambda: all(h.heartbeat.ticking for h in harnesses))
    started = [h.heartbeat.ticking for h in harnesses]
    _wait_for(lambda: _messages_left(sqs, queue_url) == 0)
    worker.stop()
    thread.join(_PATIENCE_S)
    lines_at_stop = [len(h.lines()) for h in harnesses]
    time.sleep(0.3)  # six intervals
    # THEN each slot's ticker ran while it worked and renewed the waiting job; the stop stopped every
    # ticker (none left running), nothing was written after it, and the worker exited 0
    assert started == [True, True]
    assert renewed.is_set()
    assert [h.heartbeat.ticking for h in harnesses] == [False, False]
    assert [len(h.lines()) for h in harnesses] == lines_at_stop
    assert codes == [0]


#: The loop's property runs real threads (a receive waits up to a second): a tenth of the profile's examples.
_LOOP_EXAMPLES = max(3, settings().max_examples // 10)


@settings(max_examples=_LOOP_EXAMPLES)
@given(
    slots=st.integers(1, 3),
    jobs=st.integers(1, 6),
    groups=st.integers(1, 3),
    stop_after=st.integers(0, 6),
    grace_seconds=st.sampled_from([0.0, 10.0]),
)
def test_a_stop_at_any_point_loses_nothing_and_keeps_each_groups_order(
    slots: int, jobs: int, groups: int, stop_after: int, grace_seconds: float
) -> None:
    with mock_aws():
        # GIVEN jobs in groups, a worker of 1 to 3 slots, and a stop after some of the jobs ran
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        create_tables(dynamodb)
        sqs = boto3.client("sqs", region_name=REGION)
        queue_url = sqs.create_queue(
            QueueName="jobs.fifo", Attributes={"FifoQueue": "true", "VisibilityTimeout": "120"}
        )["QueueUrl"]
        effects: list[tuple[str, str]] = []
        lock = threading.Lock()

        def handle(job: Job, context: Any) -> None:
            with lock:
                if not context.cancelled.is_set():  # a job checks before its effect, as documented
                    effects.append((job.group, job.id))

        sent = [(f"g{n % groups}", f"j{n}") for n in range(jobs)]
        for group, job_id in sent:
            _send(sqs, queue_url, job_id, group)
        clock = FakeClock()
        first, _ = _worker(
            [SlotHarness(dynamodb, sqs, queue_url, handle, clock=clock) for _ in range(slots)],
            queue_url,
            grace_seconds=grace_seconds,
            batch_size=2,
        )
        thread, codes = _start(first)
        _wait_for(lambda: len(effects) >= min(stop_after, jobs))
        # WHEN it is stopped (SIGTERM), then a second worker runs until every job ran
        first.stop()
        thread.join(_PATIENCE_S)
        clock.advance(200)  # past any lease and backoff the stop left
        second, _ = _worker([SlotHarness(dynamodb, sqs, queue_url, handle, clock=clock)], queue_url)
        thread, more = _start(second)
        _wait_for(
            lambda: {j for _, j in effects} == {j for _, j in sent} and _messages_left(sqs, queue_url) == 0
        )
        second.stop()
        thread.join(_PATIENCE_S)
        # THEN both exited 0; nothing is lost; each group's effects are in its order
        assert codes + more == [0, 0]
        assert _messages_left(sqs, queue_url) == 0
        for g in range(groups):
            order = [j for group, j in sent if group == f"g{g}"]
            done = [j for group, j in effects if group == f"g{g}"]
            assert list(dict.fromkeys(done)) == order
        # AND with a grace period long enough, nothing ran twice
        if grace_seconds:
            assert sorted(effects) == sorted(sent)


def test_each_slot_runs_one_groups_records_and_a_free_slot_takes_a_held_group(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a worker of 2 slots whose first receive brings 3 groups, the first group's job long
    long_running, finish = threading.Event(), threading.Event()
    ran: list[str] = []

    def handle(job: Job, context: Any) -> None:
        ran.append(job.id)
        if job.id == "a1":
            long_running.set()
            finish.wait(_PATIENCE_S)

    clock = FakeClock()
    harnesses = [SlotHarness(dynamodb, sqs, queue_url, handle, clock=clock) for _ in range(2)]
    batches: list[list[str]] = []
    for harness in harnesses:
        process = harness.slot.process_batch

        def recording(records: list[Any], context: Any, process: Any = process) -> Any:
            batches.append([r["attributes"]["MessageGroupId"] for r in records])
            return process(records, context)

        harness.slot.process_batch = recording
    for job_id, group in [("a1", "ga"), ("b1", "gb"), ("c1", "gc"), ("a2", "ga")]:
        _send(sqs, queue_url, job_id, group)
    worker, _ = _worker(harnesses, queue_url)
    # WHEN it runs while a1 runs long
    thread, codes = _start(worker)
    long_running.wait(_PATIENCE_S)
    _wait_for(lambda: {"b1", "c1"} <= set(ran))
    others_done_first = set(ran) >= {"b1", "c1"} and "a2" not in ran
    finish.set()
    _wait_for(lambda: _messages_left(sqs, queue_url) == 0)
    worker.stop()
    thread.join(_PATIENCE_S)
    # THEN every batch a slot ran held one group's records, the other groups ran on the free slot while
    # a1 ran, and a2 ran after a1
    assert all(len(set(groups)) == 1 for groups in batches), batches
    assert others_done_first
    assert ran.index("a2") > ran.index("a1")
    assert codes == [0]


def test_a_stop_gives_back_another_groups_records_of_the_same_receive_at_once(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN one slot running j1 (group g1) of a receive that also brought j2 and j3 (group g2)
    running, finish = threading.Event(), threading.Event()

    def handle(job: Job, context: Any) -> None:
        running.set()
        finish.wait(_PATIENCE_S)

    harness = SlotHarness(dynamodb, sqs, queue_url, handle)
    for job_id, group in [("j1", "g1"), ("j2", "g2"), ("j3", "g2")]:
        _send(sqs, queue_url, job_id, group)
    worker, stream = _worker([harness], queue_url, grace_seconds=_PATIENCE_S)
    thread, codes = _start(worker)
    running.wait(_PATIENCE_S)
    # WHEN the worker is stopped (SIGTERM) while j1 still runs
    worker.stop()
    back: list[str] = []

    def received() -> bool:
        messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
        back.extend(json.loads(m["Body"])["jobId"] for m in messages)
        return bool(back)

    _wait_for(received)
    still_running = thread.is_alive()
    finish.set()
    thread.join(_PATIENCE_S)
    # THEN g2's records came back at once, in order, while j1 was still running; the worker exited 0
    assert back == ["j2", "j3"]
    assert still_running
    assert codes == [0]
    assert '"event":"held_released"' in stream.getvalue()
