"""The worker's heartbeat on moto: renewals, the fence of a stale run, the bounds of a run."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.claim.store import ClaimOutcome, ClaimStore
from constructs_fifo.runtime.constants import (
    METRIC_HEARTBEAT_FAILURES,
    METRIC_JOB_DURATION_EXCEEDED,
    STATUS_IN_FLIGHT,
    STATUS_SUCCEEDED,
    JobMode,
)
from constructs_fifo.runtime.job import Job

from .runtime_harness import TABLE_NAME, body, failed_ids, receive_records
from .worker_harness import VISIBILITY_S, SlotHarness

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


def _send(sqs: SQSClient, queue_url: str, *job_ids: str, group: str = "ws#1") -> None:
    for job_id in job_ids:
        sqs.send_message(
            QueueUrl=queue_url, MessageBody=body(job_id), MessageGroupId=group, MessageDeduplicationId=job_id
        )


def _job(job_id: str) -> Job:
    return Job(
        id=job_id,
        type="apply_patch",
        payload={},
        group="ws#1",
        message_id=f"m-{job_id}",
        attempt=1,
        body={},
    )


def test_a_tick_renews_the_running_jobs_lease_from_now(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a slot whose job runs past its first lease, ticking the heartbeat meanwhile
    seen: dict[str, Any] = {}

    def handle(job: Job, context: Any) -> None:
        h.clock.advance(100)
        h.heartbeat.tick()
        seen["claim"] = ClaimStore(TABLE_NAME, dynamodb).get(job.id)
        seen["cancelled"] = context.cancelled.is_set()

    h = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1")
    records = receive_records(sqs, queue_url)
    # WHEN the batch runs
    response = h.slot.process_batch(records, h.heartbeat.begin(h.clock()))
    # THEN the lease was moved to a visibility timeout from the tick, and the job ran to its end
    assert seen["claim"]["lease_expires_at"] == int(h.clock() * 1000) + VISIBILITY_S * 1000
    assert seen["cancelled"] is False
    assert failed_ids(response) == []
    assert h.statuses() == [("j1", "SUCCEEDED")]


def test_a_stale_runs_writes_are_refused_and_the_worker_that_took_over_stands(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN worker A's job paused past its lease (no renewal), and worker B took the claim over
    store_b = ClaimStore(TABLE_NAME, dynamodb, max_attempts=3)
    taken: dict[str, Any] = {}

    def handle(job: Job, context: Any) -> None:
        h.clock.advance(VISIBILITY_S + 1)
        store_b._clock = h.clock
        taken["b"] = store_b.claim(job, lease_ms=60_000)
        # WHEN A's heartbeat ticks (its renewal is refused), then its job returns as if it succeeded
        h.heartbeat.tick()
        taken["told"] = context.cancelled.is_set(), context.get_remaining_time_in_millis()

    h = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1")
    _send(sqs, queue_url, "j2", group="ws#2")
    records = receive_records(sqs, queue_url)
    response = h.slot.process_batch(records, h.heartbeat.begin(h.clock()))
    # THEN B holds attempt 2; A was told (cancelled, no time left) and wrote nothing: B's claim stands
    assert taken["b"].outcome is ClaimOutcome.ACQUIRED
    assert taken["b"].attempt == 2
    assert taken["told"] == (True, 0)
    claim = ClaimStore(TABLE_NAME, dynamodb).get("j1")
    assert claim is not None
    assert (claim["status"], claim["owner"]) == (STATUS_IN_FLIGHT, taken["b"].owner)
    assert [s for _, s in h.statuses()] == ["FENCED", "DEADLINE"]  # j2 (another group) not started
    assert failed_ids(response) == [r["messageId"] for r in records]
    assert h.metric(METRIC_HEARTBEAT_FAILURES) == 1


def test_the_store_fence_refuses_a_stale_owners_renewal_and_completion(dynamodb: DynamoDBClient) -> None:
    # GIVEN a claim whose lease ran out and that another worker took over
    clock = [1_700_000_000.0]
    store = ClaimStore(TABLE_NAME, dynamodb, clock=lambda: clock[0])
    first = store.claim(_job("j1"), lease_ms=1000)
    assert store.renew("j1", first.owner or "", lease_ms=5000)
    clock[0] += 10
    second = store.claim(_job("j1"), lease_ms=1000)
    # WHEN the first owner renews, then completes
    renewed = store.renew("j1", first.owner or "", lease_ms=5000)
    completed = store.complete("j1", first.owner or "")
    # THEN both are refused and the second owner's claim stands; its own renewal and completion pass
    assert (renewed, completed) == (False, False)
    assert store.renew("j1", second.owner or "", lease_ms=5000)
    assert store.complete("j1", second.owner or "")
    assert (store.get("j1") or {})["status"] == STATUS_SUCCEEDED


def test_a_round_that_meets_a_jobs_last_claim_write_waits_for_it_and_leaves_the_batch_healthy(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a batch of two jobs, and a heartbeat round that comes due just as the first job's SUCCEEDED
    # claim has been written (the call returned, the slot has not yet moved on): observed at a terminal,
    # where the round's renewal found the claim SUCCEEDED, was refused, and called the batch stale
    writes: dict[int, bool] = {}
    rounds: list[threading.Thread] = []

    def note_update(params: dict[str, Any], **_: Any) -> None:
        writes[threading.get_ident()] = ":succeeded" in str(params.get("ExpressionAttributeValues", {}))

    def after_update(**_: Any) -> None:
        if writes.pop(threading.get_ident(), False) and not rounds:
            rounds.append(threading.Thread(target=h.heartbeat.tick))
            rounds[0].start()
            rounds[0].join(0.5)  # the round runs now, or waits for the write to be done with

    dynamodb.meta.events.register("provide-client-params.dynamodb.UpdateItem", note_update)
    dynamodb.meta.events.register("after-call.dynamodb.UpdateItem", after_update)
    h = SlotHarness(dynamodb, sqs, queue_url, lambda job, context: None)
    _send(sqs, queue_url, "j1", "j2")
    records = receive_records(sqs, queue_url)
    # WHEN the batch runs
    try:
        response = h.slot.process_batch(records, h.heartbeat.begin(h.clock()))
    finally:
        dynamodb.meta.events.unregister("provide-client-params.dynamodb.UpdateItem", note_update)
        dynamodb.meta.events.unregister("after-call.dynamodb.UpdateItem", after_update)
    rounds[0].join(5)
    # THEN the round renewed the records and no claim, the batch stayed healthy and both jobs succeeded
    assert not h.heartbeat.stale()
    assert "heartbeat_stale" not in h.events()
    assert h.statuses() == [("j1", "SUCCEEDED"), ("j2", "SUCCEEDED")]
    assert failed_ids(response) == []
    assert h.metric(METRIC_HEARTBEAT_FAILURES) == 0


def test_a_renewal_refused_for_the_records_receipt_makes_the_batch_stale(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a running job whose record another consumer deleted (its receipt handle no longer valid)
    def handle(job: Job, context: Any) -> None:
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=records[0]["receiptHandle"])
        h.heartbeat.tick()

    h = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1")
    records = receive_records(sqs, queue_url)
    # WHEN the batch runs (its heartbeat ticking inside the job)
    response = h.slot.process_batch(records, h.heartbeat.begin(h.clock()))
    # THEN the run is stale: its completion was refused, the claim left IN_FLIGHT for the next claim
    assert h.heartbeat.stale()
    assert h.statuses() == [("j1", "FENCED")]
    assert failed_ids(response) == [records[0]["messageId"]]
    assert (ClaimStore(TABLE_NAME, dynamodb).get("j1") or {})["status"] == STATUS_IN_FLIGHT


def test_a_run_past_max_job_duration_is_stopped_and_counted_as_an_attempt(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a job that outlives max_job_duration (it ignores the cancellation)
    def handle(job: Job, context: Any) -> None:
        h.clock.advance(61)
        h.heartbeat.tick()

    h = SlotHarness(dynamodb, sqs, queue_url, handle, max_job_duration_seconds=60)
    _send(sqs, queue_url, "j1")
    records = receive_records(sqs, queue_url)
    # WHEN the batch runs
    h.slot.process_batch(records, h.heartbeat.begin(h.clock()))
    # THEN the run was stopped (JobDurationExceeded), its lease released: the next claim is attempt 2
    assert h.metric(METRIC_JOB_DURATION_EXCEEDED) == 1
    assert h.statuses() == [("j1", "FENCED")]
    h.clock.advance(0.01)
    retry = ClaimStore(TABLE_NAME, dynamodb, clock=h.clock).claim(_job("j1"), lease_ms=1000)
    assert (retry.outcome, retry.attempt) == (ClaimOutcome.ACQUIRED, 2)


def test_the_context_tells_a_job_its_time_left_under_max_job_duration(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a job that reads its remaining time 10 s into its run
    seen: list[int] = []

    def handle(job: Job, context: Any) -> None:
        h.clock.advance(10)
        seen.append(context.get_remaining_time_in_millis())

    h = SlotHarness(dynamodb, sqs, queue_url, handle, max_job_duration_seconds=60)
    _send(sqs, queue_url, "j1")
    # WHEN it runs
    h.slot.process_batch(receive_records(sqs, queue_url), h.heartbeat.begin(h.clock()))
    # THEN it has the rest of its bound
    assert seen == [50_000]


def test_a_batch_near_the_12_hour_cap_is_stopped(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a job still running within one interval of SQS's 12-hour visibility cap
    def handle(job: Job, context: Any) -> None:
        h.clock.advance(12 * 3600 - 10)
        h.heartbeat.tick()

    h = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1")
    # WHEN it ticks
    h.slot.process_batch(receive_records(sqs, queue_url), h.heartbeat.begin(h.clock()))
    # THEN the run was stopped, as at max_job_duration
    assert h.metric(METRIC_JOB_DURATION_EXCEEDED) == 1
    assert h.statuses() == [("j1", "FENCED")]


def test_a_state_mode_worker_heartbeats_visibility_only(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a state-mode slot whose transition ticks the heartbeat
    def apply(job: Job, state: Any) -> dict[str, Any]:
        h.clock.advance(40)
        h.heartbeat.tick()
        return {"applied": [*(state or {}).get("applied", []), job.id]}

    h = SlotHarness(dynamodb, sqs, queue_url, apply, mode=JobMode.STATE)
    _send(sqs, queue_url, "s1", "s2")
    records = receive_records(sqs, queue_url)
    # WHEN the batch runs
    response = h.slot.process_batch(records, h.heartbeat.begin(h.clock()))
    # THEN both transitions applied in order, no renewal failed, and no claim was written or renewed
    assert failed_ids(response) == []
    assert [s for _, s in h.statuses()] == ["SUCCEEDED", "SUCCEEDED"]
    assert not h.heartbeat.stale()
    assert h.metric(METRIC_HEARTBEAT_FAILURES) == 0
    assert dynamodb.scan(TableName=TABLE_NAME)["Items"] == []


def test_the_ticker_renews_by_itself_while_the_job_runs(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a slot whose heartbeat runs its own ticker every 50 ms, and a job that waits for a renewal
    renewed: list[bool] = []

    def handle(job: Job, context: Any) -> None:
        first = (ClaimStore(TABLE_NAME, dynamodb).get(job.id) or {})["updated_at"]
        h.clock.advance(5)
        for _ in range(2000):  # bounded: the ticker renews within a few of its 50 ms intervals
            if (ClaimStore(TABLE_NAME, dynamodb).get(job.id) or {})["updated_at"] != first:
                renewed.append(True)
                return
            time.sleep(0.01)

    h = SlotHarness(dynamodb, sqs, queue_url, handle, interval_seconds=0.05, ticker=True)
    _send(sqs, queue_url, "j1")
    # WHEN the batch runs
    response = h.slot.process_batch(receive_records(sqs, queue_url), h.heartbeat.begin(h.clock()))
    h.heartbeat.close()
    # THEN the claim was renewed while the job waited, and the job then succeeded
    assert renewed == [True]
    assert failed_ids(response) == []


def test_renewal_calls_that_fail_outright_are_counted_then_make_the_batch_stale(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a heartbeat whose visibility calls fail (its queue is gone), ticking twice in a long job
    def handle(job: Job, context: Any) -> None:
        sqs.delete_queue(QueueUrl=queue_url)
        h.clock.advance(30)
        h.heartbeat.tick()
        seen.append(h.heartbeat.stale())
        h.clock.advance(VISIBILITY_S)
        h.heartbeat.tick()
        seen.append(h.heartbeat.stale())

    seen: list[bool] = []
    h = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1")
    # WHEN the batch runs
    h.slot.process_batch(receive_records(sqs, queue_url), h.heartbeat.begin(h.clock()))
    # THEN the first failure was only counted; a whole visibility timeout without renewal made it stale
    assert seen == [False, True]
    assert h.metric(METRIC_HEARTBEAT_FAILURES) >= 2
    assert "visibility_renewal_failed" in h.events()


def _heartbeat_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name == "heartbeat"}


def _wait_for_renewal(h: SlotHarness, dynamodb: DynamoDBClient, job_id: str) -> bool:
    """Wait (bounded) until the slot's own ticker renewed ``job_id``'s claim."""
    first = (ClaimStore(TABLE_NAME, dynamodb).get(job_id) or {})["updated_at"]
    h.clock.advance(5)
    for _ in range(2000):  # bounded: the ticker renews within a few of its 50 ms intervals
        if (ClaimStore(TABLE_NAME, dynamodb).get(job_id) or {})["updated_at"] != first:
            return True
        time.sleep(0.01)
    return False


def test_one_ticker_started_once_serves_every_batch_of_its_slot(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a slot whose ticker (every 50 ms) was started once, and three batches run one after another:
    # a short one, one that waits for a renewal right after it (the ticker still timing the first),
    # and, after an idle pause of several intervals, another that waits for a renewal
    renewed: list[str] = []
    threads_seen: list[set[threading.Thread]] = []

    def handle(job: Job, context: Any) -> None:
        threads_seen.append(_heartbeat_threads())
        if job.id != "short" and _wait_for_renewal(h, dynamodb, job.id):
            renewed.append(job.id)

    h = SlotHarness(dynamodb, sqs, queue_url, handle, interval_seconds=0.05, ticker=True)
    before = _heartbeat_threads()
    h.heartbeat.start()
    ours = _heartbeat_threads() - before
    idle_lines: list[int] = []
    # WHEN the three batches run
    for job_id in ("short", "between", "after-idle"):
        if job_id == "after-idle":
            lines_before = len(h.lines())
            time.sleep(0.3)  # six intervals with nothing in flight
            idle_lines.append(len(h.lines()) - lines_before)
        _send(sqs, queue_url, job_id, group=f"ws#{job_id}")
        h.slot.process_batch(receive_records(sqs, queue_url), h.heartbeat.begin(h.clock()))
    h.heartbeat.close()
    # THEN one ticker served them all (no thread started per batch), each waiting job was renewed by
    # it, the idle slot wrote nothing, every round line named a job of these batches (or none: a round
    # that begins between two jobs of a batch says null, as worker/rounds.py documents; which rounds
    # fall there is the machine's timing), and the close stopped it
    assert len(ours) == 1
    assert [seen - before for seen in threads_seen] == [ours] * 3
    assert renewed == ["between", "after-idle"]
    assert idle_lines == [0]
    named = {line["jobId"] for line in h.lines() if line.get("event") == "heartbeat"}
    assert {"between", "after-idle"} <= named <= {"short", "between", "after-idle", None}
    assert [s for _, s in h.statuses()] == ["SUCCEEDED"] * 3
    assert not h.heartbeat.ticking
    assert not any(thread.is_alive() for thread in ours)


def test_a_closed_ticker_renews_nothing_more(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a slot's ticker closed while its job still runs (the worker's stop, past its grace)
    after_close: list[int] = []

    def handle(job: Job, context: Any) -> None:
        _wait_for_renewal(h, dynamodb, job.id)
        h.heartbeat.close()
        lines_before = len(h.lines())
        h.clock.advance(5)
        time.sleep(0.3)  # six intervals
        after_close.append(len(h.lines()) - lines_before)

    h = SlotHarness(dynamodb, sqs, queue_url, handle, interval_seconds=0.05, ticker=True)
    h.heartbeat.start()
    _send(sqs, queue_url, "j1")
    # WHEN the batch runs on
    h.slot.process_batch(receive_records(sqs, queue_url), h.heartbeat.begin(h.clock()))
    # THEN no round ran after the close, and no later batch starts the ticker again
    assert after_close == [0]
    assert not h.heartbeat.ticking
    with h.heartbeat.running([]):
        assert not h.heartbeat.ticking


def test_a_round_writes_one_info_line_of_what_it_renewed_and_an_idle_tick_none(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a batch of two records whose first job ticks the heartbeat once
    written: list[list[dict[str, Any]]] = []

    def handle(job: Job, context: Any) -> None:
        if job.id == "j1":
            before = len(h.lines())
            h.clock.advance(30)
            h.heartbeat.tick()
            written.append(h.lines()[before:])

    h = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1")
    _send(sqs, queue_url, "j2", group="ws#2")
    # WHEN the batch runs, then the heartbeat ticks with nothing in flight
    h.slot.process_batch(receive_records(sqs, queue_url), h.heartbeat.begin(h.clock()))
    idle_before = len(h.lines())
    h.heartbeat.tick()
    # THEN the round wrote one INFO line: the job, the records held, their visibility, the lease renewed
    assert [
        {k: line.get(k) for k in ("level", "event", "jobId", "records", "visibilityTimeout", "leaseRenewed")}
        for line in written[0]
    ] == [
        {
            "level": "INFO",
            "event": "heartbeat",
            "jobId": "j1",
            "records": 2,
            "visibilityTimeout": VISIBILITY_S,
            "leaseRenewed": True,
        }
    ]
    # AND the idle tick wrote nothing
    assert len(h.lines()) == idle_before


def test_a_refused_renewal_writes_one_warning_line_naming_the_job_and_what_follows(
    dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str
) -> None:
    # GIVEN a job paused past its lease while another worker took its claim over
    written: list[list[dict[str, Any]]] = []

    def handle(job: Job, context: Any) -> None:
        h.clock.advance(VISIBILITY_S + 1)
        store_b = ClaimStore(TABLE_NAME, dynamodb, max_attempts=3, clock=h.clock)
        store_b.claim(job, lease_ms=60_000)
        before = len(h.lines())
        # WHEN its heartbeat ticks (the renewal is refused)
        h.heartbeat.tick()
        written.append(h.lines()[before:])

    h = SlotHarness(dynamodb, sqs, queue_url, handle)
    _send(sqs, queue_url, "j1")
    h.slot.process_batch(receive_records(sqs, queue_url), h.heartbeat.begin(h.clock()))
    # THEN the round wrote one WARNING line naming the job, the refusal and what happens next,
    # which is also the HeartbeatFailures metric
    [line] = written[0]
    assert (line["level"], line["event"], line["jobId"]) == ("WARNING", "heartbeat_stale", "j1")
    assert "another worker holds it" in line["reason"]
    assert "its next run counts as an attempt" in line["action"]
    assert line[METRIC_HEARTBEAT_FAILURES] == 1
