"""scenario_events_run.py: the events scenario's result, its violations and report, and the publish."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from constructs_fifo.demo.errors import DemoError
from constructs_fifo.demo.sample_app import JOB_CODE_DIR
from constructs_fifo.demo.scenarios.events import (
    EVENT_SOURCE,
    arrival_states,
    event_stream,
    expected_states,
    load_account_agent,
)
from constructs_fifo.demo.scenarios.events_run import (
    MAX_PUT_EVENTS_ENTRIES,
    EventsResult,
    publish,
)

REGION = "us-east-1"
AGENT = load_account_agent(Path(__file__).resolve().parents[4] / JOB_CODE_DIR)


def test_a_converged_run_passes_and_reports_the_order_blind_states_beside_it(tmp_path: Path) -> None:
    # GIVEN every account in its in-order state, and the pipe sent everything
    stream = event_stream(5, seed=3)
    result = EventsResult(
        stream, expected_states(stream, AGENT), AGENT, pipe_stats=[{"sent": len(stream), "failed": 0}]
    )
    # WHEN the report is written
    result.write_report(tmp_path / "r" / "events.json")
    report = json.loads((tmp_path / "r" / "events.json").read_text())
    # THEN it passes, and each account carries its three states
    assert result.passed and report["passed"] and report["violations"] == []
    assert report["counts"]["converged_with_seq"] == 5
    assert report["counts"]["pipe_sent"] == len(stream)
    blind = arrival_states(stream, AGENT)
    for account, states in report["accounts"].items():
        assert states["with_seq"] == states["in_order"]
        assert states["without_seq"] == blind[account]
    assert report["diverged_without_seq"] is (blind != expected_states(stream, AGENT))


def test_accounts_applied_in_arrival_order_and_records_left_in_the_pipe_are_violations() -> None:
    # GIVEN the states an order-blind consumer leaves, and a pipe that left two records
    stream = event_stream(5, seed=3)
    result = EventsResult(stream, arrival_states(stream, AGENT), AGENT, pipe_stats=[{"sent": 1, "failed": 2}])
    # THEN each account that did not converge is named with what was expected and found, and the pipe too
    assert not result.passed
    differing = result.with_seq.differing
    assert differing
    assert [v.split(":")[0] for v in result.violations[:-1]] == [f"account {a}" for a in differing]
    assert all("expected active, billed 17, held 5, found " in v for v in result.violations[:-1])
    assert result.violations[-1] == "the pipe left 2 record(s) in the staging queue"
    assert "NOT CONVERGED" in result.verdict()


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield


@pytest.mark.usefixtures("aws")
def test_publish_sends_every_event_on_the_bus_and_names_a_missing_bus() -> None:
    # GIVEN a bus whose rule sends the scenario's events to a queue
    events = boto3.client("events", region_name=REGION)
    sqs = boto3.client("sqs", region_name=REGION)
    events.create_event_bus(Name="b")
    queue_url = sqs.create_queue(QueueName="seen")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]
    events.put_rule(Name="r", EventBusName="b", EventPattern=json.dumps({"source": [EVENT_SOURCE]}))
    events.put_targets(Rule="r", EventBusName="b", Targets=[{"Id": "q", "Arn": queue_arn["QueueArn"]}])
    # WHEN 25 events are published (more than one PutEvents holds)
    stream = event_stream(5, seed=3)
    assert len(stream) > MAX_PUT_EVENTS_ENTRIES
    assert publish(stream, events_client=events, bus="b") == 25
    # THEN every one reached the bus's rule, each with its type and detail
    seen: list[dict[str, Any]] = []
    while messages := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", []):
        seen += [json.loads(m["Body"]) for m in messages]
        sqs.delete_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
        )
    published = {e.event_id: e for e in stream}
    assert sorted(event["detail"]["eventId"] for event in seen) == sorted(published)
    assert all(event["detail-type"] == published[event["detail"]["eventId"]].event_type for event in seen)
    # AND publishing on a bus that does not exist stops with the reason and the fix
    with pytest.raises(DemoError, match="no bus 'missing'"):
        publish(stream, events_client=events, bus="missing")
