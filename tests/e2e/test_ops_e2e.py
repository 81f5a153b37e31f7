"""Issue 13's "Done when", on the emulator: an operator sees and acts on a poison job in both modes.

The sample stack (``local serve`` + ``deploy`` with the real CDK CLI, the session's deployment) is
driven through ``constructs_fifo.cli.main`` in-process, as an operator types it (``--endpoint-url``,
``--yes``, ``--json``), with ``drain`` (the deployed function's code in Lambda-like workers) between
the steps. In each mode one workspace gets a healthy job, a poison job and three healthy jobs behind
it; a second workspace two healthy jobs. Then: the poison job parks its group; ``status`` and
``groups list --parked`` show it; ``groups show`` shows its error; ``groups resume --skip-dead`` sends
it to the DLQ and the kept jobs run in order; ``dlq list`` shows it with its reason; the cause is
fixed and ``dlq redrive --job J --reset`` runs it again, and it succeeds; ``claims release`` refuses a
live lease (claim mode); every ``--dry-run`` changes nothing; the queue ends empty.

The poison job's behaviour is flipped by its deployment, not its body (a redriven copy has the same
body): it fails its first attempt (``simulate.fail_attempts = 1``), and the function first runs with
``max_attempts`` 1, so it dies at once (``EXHAUSTED``). The fix is the function's configuration as
deployed (five attempts): redriven, it fails once more, is retried after its backoff and succeeds on
its second attempt, which the claim's or the state's attempt count shows.

What the jobs did is read from their effect, never from the runtime's bookkeeping: the workspace's
``activity`` (state mode, through ``GroupStateReader``), the notification table (claim mode), with
the order of the replayed notifications from their claims' ``updated_at`` (each run makes three
DynamoDB calls, so two runs in one group never share a millisecond).
"""

from __future__ import annotations

import io
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_OK, EXIT_VIOLATIONS, main
from constructs_fifo.client import JobProducer
from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.local.demo.sample_app import (
    ACTIVITY_ATTRIBUTE,
    NOTIFICATION_KEY,
    NOTIFICATION_QUEUE,
    NOTIFICATION_TYPE,
    OUTPUT_NOTIFICATION_TABLE_NAME,
    STACK_NAME,
    WORKSPACE_QUEUE,
    group_of,
    transient_failure,
)
from constructs_fifo.local.stack import DeployedQueue, resolve_queue
from constructs_fifo.runtime.claims import ClaimStore
from constructs_fifo.runtime.constants import ENV_MAX_ATTEMPTS, DeadReason
from constructs_fifo.runtime.job import Job

from .conftest import Deployment

pytestmark = pytest.mark.e2e

#: Healthy jobs behind the poison job, kept while its group is parked.
BEHIND = 3


@dataclass
class Operator:
    """The CLI against the session's emulator, and what a test needs to look at the queue's effects."""

    deployment: Deployment
    queue_id: str
    deployed: DeployedQueue
    commands: list[str] = field(default_factory=list)

    @property
    def claim_mode(self) -> bool:
        return self.deployed.claim_table is not None

    def cli(self, *argv: str) -> tuple[int, str]:
        """``constructs-fifo ARGV --endpoint-url ... --queue Q``: exit code, stdout and stderr."""
        out, err = io.StringIO(), io.StringIO()
        words = [*argv, "--endpoint-url", self.deployment.endpoint_url, "--queue", self.queue_id]
        started = time.monotonic()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(words)
        self.commands.append(f"{time.monotonic() - started:5.1f} s  {' '.join(argv)}")
        return code, out.getvalue() + err.getvalue()

    def json(self, *argv: str) -> Any:
        code, out = self.cli(*argv, "--json")
        assert code == EXIT_OK, (argv, code, out)
        return json.loads(out)

    def drain(self) -> dict[str, Any]:
        code, out = self.cli("drain")
        assert code == EXIT_OK, out
        return dict(json.loads(out[: out.rindex("}") + 1]))

    def snapshot(self) -> dict[str, Any]:
        """Every attribute of the queue and its DLQ, and every item of the queue's tables."""
        sqs = self.deployment.target.client("sqs")
        dynamodb = self.deployment.target.client("dynamodb")
        queues = {
            url: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
            for url in (self.deployed.queue_url, self.deployed.dead_letter_queue_url)
            if url
        }
        tables = [self.deployed.group_table, self.deployed.claim_table]
        if self.claim_mode:
            tables.append(self.deployment.outputs[OUTPUT_NOTIFICATION_TABLE_NAME])
        items = {
            table: sorted(
                json.dumps(item, sort_keys=True)
                for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True)
                for item in page["Items"]
            )
            for table in tables
            if table
        }
        return {"queues": queues, "tables": items}

    def unchanged_by_dry_run(self, *argv: str) -> None:
        before = self.snapshot()
        code, out = self.cli(*argv, "--dry-run")
        assert code == EXIT_OK, (argv, out)
        assert "dry run: nothing was changed" in out, out
        assert self.snapshot() == before, argv


@contextmanager
def max_attempts(operator: Operator, attempts: int) -> Iterator[None]:
    """The queue's function deployed with ``max_attempts`` = ``attempts`` until the block ends."""
    client = operator.deployment.target.client("lambda")
    name = operator.deployed.function_name
    deployed = client.get_function_configuration(FunctionName=name)["Environment"]["Variables"]
    client.update_function_configuration(
        FunctionName=name, Environment={"Variables": {**deployed, ENV_MAX_ATTEMPTS: str(attempts)}}
    )
    try:
        yield
    finally:
        client.update_function_configuration(FunctionName=name, Environment={"Variables": deployed})


def _effects(operator: Operator, group: str, job_ids: list[str]) -> list[str]:
    """The jobs of ``job_ids`` whose effect happened, in the order it happened."""
    if not operator.claim_mode:
        assert operator.deployed.group_table is not None
        reader = GroupStateReader(
            operator.deployed.group_table, operator.deployment.target.client("dynamodb")
        )
        state = reader.get(group) or {}
        return [entry["jobId"] for entry in state.get(ACTIVITY_ATTRIBUTE, []) if entry["jobId"] in job_ids]
    table = operator.deployment.outputs[OUTPUT_NOTIFICATION_TABLE_NAME]
    dynamodb = operator.deployment.target.client("dynamodb")
    recorded = [
        job_id
        for job_id in job_ids
        if "Item"
        in dynamodb.get_item(TableName=table, Key={NOTIFICATION_KEY: {"S": job_id}}, ConsistentRead=True)
    ]
    assert operator.deployed.claim_table is not None
    claims = ClaimStore(operator.deployed.claim_table, dynamodb)
    finished = {job_id: (claims.get(job_id) or {})["updated_at"] for job_id in recorded}
    return sorted(recorded, key=lambda job_id: finished[job_id])


def _attempts(operator: Operator, group: str, job_id: str) -> int:
    """How many runs the job's last life took (its claim's, or the state's count while it ran)."""
    if operator.claim_mode:
        return int(operator.json("claims", "show", job_id)["claim"]["attempts"])
    return int(operator.json("state", "show", group)["attempts"].get(job_id, 0))


@pytest.mark.parametrize("queue_id", [WORKSPACE_QUEUE, NOTIFICATION_QUEUE])
def test_an_operator_parks_resumes_and_redrives_a_poison_job(deployment: Deployment, queue_id: str) -> None:
    started = time.monotonic()
    deployed = resolve_queue(STACK_NAME, target=deployment.target, queue=queue_id)
    operator = Operator(deployment, queue_id, deployed)
    claim_mode = operator.claim_mode
    run = uuid.uuid4().hex[:8]
    stuck, healthy = group_of(f"ops-{run}-p"), group_of(f"ops-{run}-h")
    poison = f"ops-{run}-poison"
    before_poison = f"ops-{run}-p0"
    behind = [f"ops-{run}-p{i}" for i in range(1, BEHIND + 1)]
    others = [f"ops-{run}-h0", f"ops-{run}-h1"]
    dead_letters_before = operator.json("status")["queues"][0]["deadLetterQueueDepth"]

    def job(job_id: str, group: str, index: int, failing: bool = False) -> tuple[str, str, dict[str, Any]]:
        job_type = NOTIFICATION_TYPE if claim_mode else ("apply_patch", "run_tests", "open_pr")[index % 3]
        payload: dict[str, Any] = {"channel": "ops", "text": job_id} if claim_mode else {}
        return job_id, job_type, {**payload, **(transient_failure(1) if failing else {})}

    # GIVEN a workspace with a healthy job, a job failing its first attempt and three healthy jobs
    # behind it, and a healthy workspace, sent by the producer to a function deployed with one attempt
    producer = JobProducer(deployed.queue_url, sqs_client=deployment.target.client("sqs"))
    sends = [
        (job(before_poison, stuck, 0), stuck),
        (job(poison, stuck, 1, failing=True), stuck),
        *((job(job_id, stuck, i + 2), stuck) for i, job_id in enumerate(behind)),
        *((job(job_id, healthy, i), healthy) for i, job_id in enumerate(others)),
    ]
    with max_attempts(operator, 1):
        for (job_id, job_type, payload), group in sends:
            producer.send(job_id, job_type, payload, group=group)
        # WHEN the queue drains
        operator.drain()

    # THEN the poison job parked its group: status and groups list --parked show it
    status = operator.json("status")["queues"][0]
    assert stuck in status["parkedGroups"] and healthy not in status["parkedGroups"]
    assert {"group": stuck, "jobs": BEHIND + 1} in status["largestBacklogs"]
    parked = {row["group"]: row for row in operator.json("groups", "list", "--parked")["groups"]}
    assert (parked[stuck]["status"], parked[stuck]["deadJobId"], parked[stuck]["kept"]) == (
        "PARKED",
        poison,
        BEHIND + 1,
    )
    # AND groups show gives the dead job's error and the kept jobs in order
    shown = operator.json("groups", "show", stuck)
    assert shown["dead"]["errorType"] == "SimulatedFailureError"
    assert "fails on purpose" in shown["dead"]["error"]
    assert [kept["jobId"] for kept in shown["kept"]] == [poison, *behind]
    # AND only the jobs in front of it and the other workspace's had their effect
    assert _effects(operator, stuck, [before_poison, poison, *behind]) == [before_poison]
    assert _effects(operator, healthy, others) == others

    # WHEN the group is resumed skipping the dead job (a dry run first changes nothing)
    operator.unchanged_by_dry_run("groups", "resume", stuck, "--skip-dead")
    code, out = operator.cli("groups", "resume", stuck, "--skip-dead", "--yes")
    assert code == EXIT_OK, out
    operator.drain()
    # THEN the kept jobs had their effect, in order, and the group is no longer parked
    assert _effects(operator, stuck, [before_poison, poison, *behind]) == [before_poison, *behind]
    assert stuck not in [row["group"] for row in operator.json("groups", "list", "--parked")["groups"]]
    # AND dlq list shows the dead job with its reason
    dead = operator.json("dlq", "list", "--group", stuck)["messages"]
    assert [(m["jobId"], m["reason"], m["errorType"]) for m in dead] == [
        (poison, DeadReason.ATTEMPTS_EXHAUSTED.value, "SimulatedFailureError")
    ]

    # AND a dry run of every mutator changes nothing
    operator.unchanged_by_dry_run("dlq", "redrive", "--job", poison, "--reset")
    operator.unchanged_by_dry_run("dlq", "redrive", "--group", stuck, "--reset")
    operator.unchanged_by_dry_run("dlq", "redrive", "--reset")
    operator.unchanged_by_dry_run("dlq", "drop", poison)
    if claim_mode:
        operator.unchanged_by_dry_run("claims", "reset", poison)
        # AND claims release refuses a live lease (nothing changes), releases it with --force
        assert deployed.claim_table is not None
        live = f"ops-{run}-live"
        ClaimStore(deployed.claim_table, deployment.target.client("dynamodb")).claim(
            Job(
                id=live, group=healthy, type=NOTIFICATION_TYPE, payload={}, attempt=1, message_id="m", body={}
            ),
            lease_ms=600_000,
        )
        before = operator.snapshot()
        code, out = operator.cli("claims", "release", live, "--yes")
        assert code == EXIT_VIOLATIONS and "lease is live" in out, out
        assert operator.snapshot() == before
        operator.unchanged_by_dry_run("claims", "release", live, "--force")
        code, out = operator.cli("claims", "release", live, "--force", "--yes")
        assert code == EXIT_OK, out
        assert operator.json("claims", "show", live)["claim"]["status"] == "FAILED"

    # WHEN the cause is fixed (the function as deployed: five attempts) and the job redriven with --reset
    code, out = operator.cli("dlq", "redrive", "--job", poison, "--reset", "--yes")
    assert code == EXIT_OK, out
    operator.drain()
    # THEN it ran again: failed its first attempt, succeeded on its second, after the kept jobs
    assert _effects(operator, stuck, [before_poison, poison, *behind]) == [before_poison, *behind, poison]
    if claim_mode:
        assert _attempts(operator, stuck, poison) == 2
    assert operator.json("dlq", "list", "--group", stuck)["messages"] == []

    # THEN the queue ends empty, nothing of this run parked or dead
    final = operator.json("status")["queues"][0]
    assert (final["visible"], final["inFlight"], final["delayed"]) == (0, 0, 0)
    assert stuck not in final["parkedGroups"]
    assert final["deadLetterQueueDepth"] == dead_letters_before
    figures = {
        "queue": queue_id,
        "mode": "claim" if claim_mode else "state",
        "jobs": len(sends),
        "groups": 2,
        "parked": 1,
        "resumed": 1,
        "redriven": 1,
        "commands": len(operator.commands),
        "seconds": round(time.monotonic() - started, 1),
    }
    print(f"ops e2e figures: {figures}")
    print("\n".join(operator.commands))
