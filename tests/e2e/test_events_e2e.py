"""End to end: the events scenario on the deployed sample (bus, rule, staging queue, pipe, Accounts queue),
and the verifier biting when the pipe's ``seq`` is dropped.

Marked ``e2e``: one emulator and one deployment for the whole session (see ``conftest.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_OK, main
from constructs_fifo.demo import steps
from constructs_fifo.demo.sample_app import ACCOUNT_QUEUE, JOB_CODE_DIR, STACK_NAME
from constructs_fifo.demo.scenarios.events import arrival_states, event_stream, load_account_agent
from constructs_fifo.demo.scenarios.events_run import EventsResult, publish, read_states
from constructs_fifo.local.pipes.runner import PipeRunner
from constructs_fifo.stacks.deployed import find_queues, select_queue

from .conftest import Deployment

pytestmark = pytest.mark.e2e
AGENT = load_account_agent(Path(__file__).resolve().parents[2] / JOB_CODE_DIR)


def test_events_scenario_converges_by_seq_and_shows_the_divergence_without_it(
    deployment: Deployment, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the deployed sample WHEN the events scenario runs on it
    report = tmp_path / "events.json"
    code = main(
        [
            "demo",
            "--scenario",
            "events",
            "--endpoint-url",
            deployment.endpoint_url,
            "--no-deploy",
            "--seed",
            "104",
            "--report",
            str(report),
        ]
    )
    # THEN it exits 0: every account converged to its in-order state through the bus and the pipe
    out = capsys.readouterr().out
    result = json.loads(report.read_text())
    assert code == EXIT_OK, out
    assert (result["passed"], result["converged"], result["violations"]) == (True, True, [])
    counts = result["counts"]
    assert counts["pipe_sent"] == counts["events_published"] == 5 * counts["accounts"]
    assert counts["accounts_out_of_order"] > 0
    # AND the report shows, side by side, the wrong answer an order-blind consumer gives
    assert result["diverged_without_seq"] is True and counts["wrongly_billed_without_seq"] > 0
    some = next(a for a in result["accounts"].values() if a["without_seq"] != a["in_order"])
    assert some["with_seq"] == some["in_order"]
    assert "converged to the in-order state" in out


def _drop_seq(sqs: Any, queue_url: str) -> int:
    """A pipe whose template forgot ``seq``: take every job off the queue (each group's order kept),
    then send each back without ``seq``, under a new deduplication id (SQS keeps the old one 5 minutes)."""
    taken: list[tuple[str, dict[str, Any]]] = []
    while messages := sqs.receive_message(
        QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["MessageGroupId"]
    ).get("Messages", []):
        taken += [(m["Attributes"]["MessageGroupId"], json.loads(m["Body"])) for m in messages]
        sqs.delete_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)],
        )
    for start in range(0, len(taken), 10):
        entries = []
        for index, (group, body) in enumerate(taken[start : start + 10]):
            assert "seq" in body, body  # the deployed pipe maps it: this relay is what drops it
            del body["seq"]
            entries.append(
                {
                    "Id": str(index),
                    "MessageBody": json.dumps(body),
                    "MessageGroupId": group,
                    "MessageDeduplicationId": f"{body['jobId']}-noseq",
                }
            )
        assert not sqs.send_message_batch(QueueUrl=queue_url, Entries=entries).get("Failed")
    return len(taken)


def test_verifier_catches_account_events_applied_without_seq(deployment: Deployment) -> None:
    # GIVEN the shuffled stream published on the sample's bus and moved by its pipe
    target = deployment.target
    clients = steps.make_clients(target)
    stream = event_stream(6, seed=105)
    queue = select_queue(STACK_NAME, find_queues(STACK_NAME, target=target), ACCOUNT_QUEUE)
    assert queue.group_table is not None
    publish(stream, events_client=target.client("events"))
    [pipe] = PipeRunner.from_stack(STACK_NAME, target=target)
    assert pipe.run(until_empty=True).sent == len(stream)
    # AND the jobs' seq dropped on the way into the queue
    assert _drop_seq(clients.sqs, queue.queue_url) == len(stream)
    # WHEN the accounts queue drains through the deployed function
    steps.drain(queue, target=target, say=lambda line: None)
    accounts = sorted({event.account_id for event in stream})
    observed = read_states(accounts, group_table=queue.group_table, dynamodb_client=clients.dynamodb)
    # THEN the verifier reports the accounts that did not converge, naming what it expected and found
    result = EventsResult(stream, observed, AGENT)
    assert not result.passed
    assert result.violations and all("expected active, billed 17" in v for v in result.violations)
    # AND what the accounts ended as is exactly the order-blind answer the scenario shows beside seq
    assert observed == arrival_states(stream, AGENT)
