"""On the emulator: an operator sees and acts on a poison job in both modes.

The sample stack (``local serve`` + ``deploy`` with the real CDK CLI, the session's deployment) is
driven through ``constructs_fifo.cli.main`` in-process, as an operator types it (``--endpoint-url``,
``--yes``, ``--json``), with a drain between the steps (what ``constructs-fifo drain`` runs: the
deployed function's code in Lambda-like workers; both queues at once, each runner's workers warm from
one drain to the next, to keep the test near a minute). In each mode one workspace gets a healthy job, a
poison job and three healthy jobs behind it; a second workspace two healthy jobs. Then: the poison job
parks its group; ``status`` and ``groups list --parked`` show it; ``groups show`` shows its error;
``groups resume --skip-dead`` sends it to the DLQ and the kept jobs run in order; ``dlq list`` shows it
with its reason; the cause is fixed and ``dlq redrive --job J --reset`` runs it again, and it succeeds;
``claims release`` refuses a live lease (claim mode); every ``--dry-run`` changes nothing; the queue
ends empty.

The poison job's behaviour is flipped by its deployment, not its body (a redriven copy has the same
body): it fails its first attempt (``simulate.fail_attempts = 1``), and the function first runs with
``max_attempts`` 1, so it dies at once (``ATTEMPTS_EXHAUSTED``). The fix is the function's configuration
as deployed (five attempts): redriven, it fails once more, is retried after its backoff and succeeds on
its second attempt (the claim's attempt count shows it in claim mode).

What the jobs did is read from their effect, never from the runtime's bookkeeping: the workspace's
``activity`` (state mode, through ``GroupStateReader``), the notification table (claim mode), with the
order of the replayed notifications from their claims' ``updated_at`` (each run makes three DynamoDB
calls, so two runs in one group never share a millisecond).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import threading
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
from constructs_fifo.demo.sample_app import (
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
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import ENV_MAX_ATTEMPTS, DeadReason
from constructs_fifo.runtime.job import Job
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.deployed import DeployedQueue, resolve_queue

from .conftest import Deployment

pytestmark = pytest.mark.e2e

#: Healthy jobs behind the poison job, kept while its group is parked.
BEHIND = 3


@functools.cache
def _session(target: AwsTarget) -> Any:
    return target.session()


@functools.cache
def _client(target: AwsTarget, name: str) -> Any:
    return target.client(name, _session(target))


@dataclass
class Operator:
    """The CLI against the session's emulator, and what a test needs to look at the queue's effects."""

    deployment: Deployment
    queue_id: str
    deployed: DeployedQueue
    commands: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def claim_mode(self) -> bool:
        return self.deployed.claim_table is not None

    def client(self, name: str) -> Any:
        """One client per service for the whole test (creating one loads its model: ~0.5 s under load)."""
        return _client(self.deployment.target, name)

    def cli(self, *argv: str) -> tuple[int, str]:
        """``constructs-fifo ARGV --endpoint-url ... --queue Q``: exit code, stdout and stderr."""
        out, err = io.StringIO(), io.StringIO()
        words = [*argv, "--endpoint-url", self.deployment.endpoint_url, "--queue", self.queue_id]
        started = time.monotonic()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(words)
        self.commands.append(" ".join(argv))
        self.seconds += time.monotonic() - started
        return code, out.getvalue() + err.getvalue()

    def json(self, *argv: str) -> Any:
        code, out = self.cli(*argv, "--json")
        assert code == EXIT_OK, (argv, code, out)
        return json.loads(out)

    def snapshot(self) -> dict[str, Any]:
        """Every attribute of the queue and its DLQ, and every item of the queue's tables."""
        sqs, dynamodb = self.client("sqs"), self.client("dynamodb")
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
                # a Binary attribute (state mode's remembered ids) compares by its bytes' hex
                json.dumps(item, sort_keys=True, default=bytes.hex)
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
    client = operator.client("lambda")
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
        reader = GroupStateReader(operator.deployed.group_table, operator.client("dynamodb"))
        state = reader.get(group) or {}
        return [entry["jobId"] for entry in state.get(ACTIVITY_ATTRIBUTE, []) if entry["jobId"] in job_ids]
    table = operator.deployment.outputs[OUTPUT_NOTIFICATION_TABLE_NAME]
    dynamodb = operator.client("dynamodb")
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


@dataclass
class Scenario:
    """One queue's share of the test: its operator, its two workspaces and its jobs."""

    operator: Operator
    run: str
    sends: list[tuple[str, str, dict[str, Any], str]] = field(default_factory=list)

    @property
    def stuck(self) -> str:
        return group_of(f"ops-{self.run}-p")

    @property
    def healthy(self) -> str:
        return group_of(f"ops-{self.run}-h")

    @property
    def poison(self) -> str:
        return f"ops-{self.run}-poison"

    @property
    def first(self) -> str:
        return f"ops-{self.run}-p0"

    @property
    def behind(self) -> list[str]:
        return [f"ops-{self.run}-p{i}" for i in range(1, BEHIND + 1)]

    @property
    def others(self) -> list[str]:
        return [f"ops-{self.run}-h0", f"ops-{self.run}-h1"]

    @property
    def stuck_jobs(self) -> list[str]:
        return [self.first, self.poison, *self.behind]

    @classmethod
    def make(cls, deployment: Deployment, queue_id: str) -> Scenario:
        target = deployment.target
        deployed = resolve_queue(
            STACK_NAME,
            target=target,
            queue=queue_id,
            cloudformation_client=_client(target, "cloudformation"),
            lambda_client=_client(target, "lambda"),
            sqs_client=_client(target, "sqs"),
        )
        scenario = cls(Operator(deployment, queue_id, deployed), uuid.uuid4().hex[:8])
        claim_mode = scenario.operator.claim_mode
        for group, jobs in ((scenario.stuck, scenario.stuck_jobs), (scenario.healthy, scenario.others)):
            for index, job_id in enumerate(jobs):
                job_type = (
                    NOTIFICATION_TYPE if claim_mode else ("apply_patch", "run_tests", "open_pr")[index % 3]
                )
                payload: dict[str, Any] = {"channel": "ops", "text": job_id} if claim_mode else {}
                if job_id == scenario.poison:
                    payload.update(transient_failure(1))  # fails its first attempt only
                scenario.sends.append((job_id, job_type, payload, group))
        return scenario


DRAIN_SECONDS: list[float] = []
#: A drain's bound: each takes ~5 s; one that does not end waits on a message not of this test.
DRAIN_LIMIT_SECONDS = 60.0


def _drain(runners: list[EventSourceRunner]) -> None:
    """Drain the queues at the same time (one runner per queue, its workers warm across drains)."""
    started = time.monotonic()
    threads = [
        threading.Thread(
            target=runner.drain, kwargs={"until_empty": True, "for_seconds": DRAIN_LIMIT_SECONDS}
        )
        for runner in runners
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    DRAIN_SECONDS.append(round(time.monotonic() - started, 1))


def _runners(deployment: Deployment, scenarios: list[Scenario]) -> list[EventSourceRunner]:
    return [
        EventSourceRunner.from_function(
            scenario.operator.deployed.function_name,
            target=deployment.target,
            queue_arn=scenario.operator.deployed.queue_arn,
            lambda_client=scenario.operator.client("lambda"),
            sqs_client=scenario.operator.client("sqs"),
            s3_client=scenario.operator.client("s3"),
        )
        for scenario in scenarios
    ]


def test_an_operator_parks_resumes_and_redrives_a_poison_job_in_both_modes(deployment: Deployment) -> None:
    started = time.monotonic()
    scenarios = [Scenario.make(deployment, WORKSPACE_QUEUE), Scenario.make(deployment, NOTIFICATION_QUEUE)]
    for scenario in scenarios:  # the session's queues are shared: start from empty ones
        waiting = scenario.operator.json("status")["queues"][0]
        assert (waiting["visible"], waiting["inFlight"], waiting["delayed"]) == (0, 0, 0), (
            f"{scenario.operator.queue_id} holds messages before the test: an earlier test left them"
        )
    dead_letters_before = {
        s.operator.queue_id: s.operator.json("status")["queues"][0]["deadLetterQueueDepth"] for s in scenarios
    }

    # GIVEN per queue (state mode, claim mode) a workspace with a healthy job, a job failing its first
    # attempt and three healthy jobs behind it, and a healthy workspace, sent by the producer to a
    # function deployed with one attempt
    with contextlib.ExitStack() as stack:
        for scenario in scenarios:
            stack.enter_context(max_attempts(scenario.operator, 1))
            producer = JobProducer(
                scenario.operator.deployed.queue_url, sqs_client=scenario.operator.client("sqs")
            )
            for job_id, job_type, payload, group in scenario.sends:
                producer.send(job_id, job_type, payload, group=group)
        # WHEN the queues drain
        first = _runners(deployment, scenarios)
        try:
            _drain(first)
        finally:
            for runner in first:
                runner.close()

    for scenario in scenarios:
        operator, stuck = scenario.operator, scenario.stuck
        # THEN the poison job parked its group: status and groups list --parked show it
        status = operator.json("status")["queues"][0]
        assert stuck in status["parkedGroups"] and scenario.healthy not in status["parkedGroups"]
        assert {"group": stuck, "jobs": BEHIND + 1} in status["largestBacklogs"]
        assert status["oldestParkedJob"] is not None
        parked = {row["group"]: row for row in operator.json("groups", "list", "--parked")["groups"]}
        assert (parked[stuck]["status"], parked[stuck]["deadJobId"], parked[stuck]["kept"]) == (
            "PARKED",
            scenario.poison,
            BEHIND + 1,
        )
        # AND groups show gives the dead job's error and the kept jobs in order
        shown = operator.json("groups", "show", stuck)
        assert shown["dead"]["errorType"] == "SimulatedFailureError"
        assert "fails on purpose" in shown["dead"]["error"]
        assert [kept["jobId"] for kept in shown["kept"]] == [scenario.poison, *scenario.behind]
        # AND only the job in front of it and the other workspace's had their effect
        assert _effects(operator, stuck, scenario.stuck_jobs) == [scenario.first]
        assert _effects(operator, scenario.healthy, scenario.others) == scenario.others

        # WHEN the group is resumed skipping the dead job (a dry run first changes nothing)
        operator.unchanged_by_dry_run("groups", "resume", stuck, "--skip-dead")
        before = operator.snapshot()
        code, out = operator.cli("groups", "resume", stuck, "--skip-dead", "--yes")
        assert code == EXIT_OK, out
        # (the snapshot sees what the real run changed: the dry runs' comparisons can fail)
        assert operator.snapshot() != before

    warm = _runners(deployment, scenarios)  # the function as deployed: five attempts
    try:
        _drain(warm)
        for scenario in scenarios:
            operator, stuck, poison = scenario.operator, scenario.stuck, scenario.poison
            # THEN the kept jobs had their effect, in order, and the group is no longer parked
            assert _effects(operator, stuck, scenario.stuck_jobs) == [scenario.first, *scenario.behind]
            assert stuck not in [
                row["group"] for row in operator.json("groups", "list", "--parked")["groups"]
            ]
            # AND dlq list shows the dead job with its reason
            dead = operator.json("dlq", "list", "--group", stuck)["messages"]
            assert [(m["jobId"], m["reason"], m["errorType"]) for m in dead] == [
                (poison, DeadReason.ATTEMPTS_EXHAUSTED.value, "SimulatedFailureError")
            ]

            # AND a dry run of every mutator changes nothing
            operator.unchanged_by_dry_run("dlq", "redrive", "--job", poison, "--reset")
            operator.unchanged_by_dry_run("dlq", "redrive", "--group", stuck, "--reset")
            # (the whole DLQ is shared with the other tests, whose dead jobs may be refused: --force)
            operator.unchanged_by_dry_run("dlq", "redrive", "--reset", "--force")
            operator.unchanged_by_dry_run("dlq", "drop", poison)
            if operator.claim_mode:
                operator.unchanged_by_dry_run("claims", "reset", poison)
                _live_lease_is_refused(scenario)

            # WHEN the cause is fixed (the function as deployed) and the job redriven with --reset
            code, out = operator.cli("dlq", "redrive", "--job", poison, "--reset", "--yes")
            assert code == EXIT_OK, out
        _drain(warm)
    finally:
        for runner in warm:
            runner.close()

    for scenario in scenarios:
        operator, stuck, poison = scenario.operator, scenario.stuck, scenario.poison
        # THEN it ran again, after the kept jobs, and succeeded: on its second attempt (claim mode)
        assert _effects(operator, stuck, scenario.stuck_jobs) == [scenario.first, *scenario.behind, poison]
        if operator.claim_mode:
            assert _attempts(operator, stuck, poison) == 2
        assert operator.json("dlq", "list", "--group", stuck)["messages"] == []
        # THEN the queue ends empty, nothing of this run parked or dead
        final = operator.json("status")["queues"][0]
        assert (final["visible"], final["inFlight"], final["delayed"]) == (0, 0, 0)
        assert stuck not in final["parkedGroups"]
        assert final["deadLetterQueueDepth"] == dead_letters_before[operator.queue_id]
    figures = {
        "queues": [scenario.operator.queue_id for scenario in scenarios],
        "jobs": sum(len(scenario.sends) for scenario in scenarios),
        "groups": 2 * len(scenarios),
        "parked": len(scenarios),
        "resumed": len(scenarios),
        "redriven": len(scenarios),
        "commands": sum(len(scenario.operator.commands) for scenario in scenarios),
        "seconds": round(time.monotonic() - started, 1),
        "drainSeconds": DRAIN_SECONDS,
        "commandSeconds": round(sum(scenario.operator.seconds for scenario in scenarios), 1),
    }
    print(f"ops e2e figures: {figures}")


def _live_lease_is_refused(scenario: Scenario) -> None:
    """claims release refuses a live lease (nothing changes) and releases it with --force."""
    operator = scenario.operator
    assert operator.deployed.claim_table is not None
    live = f"ops-{scenario.run}-live"
    job = Job(
        id=live,
        group=scenario.healthy,
        type=NOTIFICATION_TYPE,
        payload={},
        attempt=1,
        message_id="m",
        body={},
    )
    ClaimStore(operator.deployed.claim_table, operator.client("dynamodb")).claim(job, lease_ms=600_000)
    before = operator.snapshot()
    code, out = operator.cli("claims", "release", live, "--yes")
    assert code == EXIT_VIOLATIONS and "lease is live" in out, out
    assert operator.snapshot() == before
    operator.unchanged_by_dry_run("claims", "release", live, "--force")
    code, out = operator.cli("claims", "release", live, "--force", "--yes")
    assert code == EXIT_OK, out
    assert operator.json("claims", "show", live)["claim"]["status"] == "FAILED"
