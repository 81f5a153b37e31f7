"""The chaos suite's own tools, seen from outside: the scheduler, the fault injector, the model endpoint."""

from __future__ import annotations

import time
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from functional.fifo_model import FifoModel
from functional.runtime_harness import REGION, FakeClock
from moto import mock_aws

from .calls import Point
from .faults import Crash, Fault, FaultInjector
from .gate import Gate
from .model_endpoint import ModelEndpoint
from .scheduler import Abort, Scheduler, SchedulerTimeoutError


def _two_workers(order: list[int]) -> list[str]:
    """Two workers of three points each, stepped in ``order``; what ran, in the order it ran."""
    scheduler = Scheduler(timeout_s=5)
    ran: list[str] = []

    def body(name: str) -> None:
        for index in range(3):
            scheduler.checkpoint(Point("job", "step", f"{name}{index}"))
            ran.append(f"{name}{index}")

    workers = [scheduler.spawn("a", lambda: body("a")), scheduler.spawn("b", lambda: body("b"))]
    try:
        for index in order:
            scheduler.step(workers[index])
    finally:
        scheduler.close()
    return ran


def test_the_scheduler_runs_workers_in_the_order_it_is_given_and_replays_it_exactly() -> None:
    # GIVEN two workers that each pass three points
    # WHEN they are stepped b, a, a, b, b, a, twice
    first = _two_workers([1, 0, 0, 1, 1, 0])
    second = _two_workers([1, 0, 0, 1, 1, 0])
    # THEN each step ran exactly the code up to the worker's next point, and the runs are identical
    assert first == ["b0", "a0", "a1", "b1", "b2", "a2"]
    assert second == first


def test_a_worker_that_never_reaches_its_next_point_fails_the_test_instead_of_hanging_it() -> None:
    # GIVEN a worker that spins for 2 s between two points, and a scheduler that waits 0.2 s
    scheduler = Scheduler(timeout_s=0.2)

    def slow() -> None:
        scheduler.checkpoint(Point("job", "start"))
        time.sleep(2)

    worker = scheduler.spawn("slow", slow)
    started = time.perf_counter()
    # WHEN it is stepped
    with pytest.raises(SchedulerTimeoutError, match="did not reach its next scheduling point"):
        scheduler.step(worker)
    # THEN the step gave up after the timeout, not after the worker
    assert time.perf_counter() - started < 1.5
    scheduler.close()


def test_closing_the_scheduler_stops_a_waiting_worker_with_an_abort_the_runtime_cannot_catch() -> None:
    # GIVEN a worker waiting at a point inside a try/except Exception
    scheduler = Scheduler(timeout_s=5)
    caught: list[Exception] = []

    def body() -> None:
        try:
            scheduler.checkpoint(Point("job", "start"))
        except Exception as exc:  # what the runtime does with errors: never an Abort
            caught.append(exc)

    worker = scheduler.spawn("w", body)
    # WHEN the scheduler closes
    scheduler.close()
    # THEN the worker ended with the Abort, which no `except Exception` caught
    assert worker.finished
    assert isinstance(worker.error, Abort)
    assert caught == []


def _gated_table(injector: FaultInjector, scheduler: Scheduler) -> Any:
    client = boto3.client("dynamodb", region_name=REGION)
    client.create_table(
        TableName="t",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    Gate(scheduler, injector, lambda *_: None).attach(client)
    return client


@pytest.mark.parametrize(
    ("fault", "raised", "written"),
    [
        (Fault.THROTTLING, ClientError, False),
        (Fault.PROVISIONED_THROUGHPUT, ClientError, False),
        (Fault.INTERNAL_ERROR, ClientError, False),
        (Fault.LOST_RESPONSE, ClientError, True),
        (Fault.CRASH, Crash, False),
        (Fault.CRASH_AFTER, Crash, True),
    ],
)
def test_the_injector_raises_the_fault_chosen_for_a_call_before_or_after_it_took_effect(
    fault: Fault, raised: type[BaseException], written: bool
) -> None:
    with mock_aws():
        # GIVEN a gated DynamoDB client used by a worker
        scheduler, injector = Scheduler(timeout_s=5), FaultInjector()
        client = _gated_table(injector, scheduler)
        worker = scheduler.spawn("w", lambda: client.put_item(TableName="t", Item={"id": {"S": "x"}}))
        assert worker.point is not None and worker.point.label == "dynamodb.PutItem"
        # WHEN the worker goes on from its PutItem with the fault
        scheduler.step(worker, fault)
        # THEN it got the fault, the item was written only by the faults that strike after the call,
        # and the injector counted it
        assert isinstance(worker.error, raised)
        item = boto3.client("dynamodb", region_name=REGION).get_item(TableName="t", Key={"id": {"S": "x"}})
        assert ("Item" in item) is written
        assert injector.injected == {(fault.name, "dynamodb.PutItem"): 1}
        scheduler.close()


def test_the_test_threads_own_calls_pass_the_gate_without_stopping() -> None:
    with mock_aws():
        # GIVEN a gated client
        client = _gated_table(FaultInjector(), Scheduler(timeout_s=0.2))
        # WHEN the test's own thread calls it
        client.put_item(TableName="t", Item={"id": {"S": "x"}})
        # THEN the call went through at once
        assert "Item" in client.get_item(TableName="t", Key={"id": {"S": "x"}})


def test_the_model_endpoint_answers_a_real_sqs_client_and_refuses_a_receipt_that_is_not_the_latest() -> None:
    # GIVEN a model queue behind a real boto3 SQS client, and a message received twice
    clock = FakeClock()
    model = FifoModel(clock, max_receive_count=10, visibility_timeout_seconds=30)
    sqs = boto3.client("sqs", region_name=REGION)
    ModelEndpoint(model).attach(sqs)
    sqs.send_message(QueueUrl=model.url, MessageBody="b", MessageGroupId="g", MessageDeduplicationId="d")
    first = model.receive()[0].receipt
    clock.advance(31)
    latest = model.receive()[0].receipt
    # WHEN the visibility is changed with both receipt handles
    response = sqs.change_message_visibility_batch(
        QueueUrl=model.url,
        Entries=[
            {"Id": "old", "ReceiptHandle": first, "VisibilityTimeout": 0},
            {"Id": "new", "ReceiptHandle": latest, "VisibilityTimeout": 5},
        ],
    )
    # THEN the latest one applies and the stale one is refused, as SQS does
    assert [entry["Id"] for entry in response["Successful"]] == ["new"]
    assert [entry["Code"] for entry in response["Failed"]] == ["ReceiptHandleIsInvalid"]
    assert model.messages[0].visible_at == clock() + 5
