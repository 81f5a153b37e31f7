"""The operations commands as a person meets them at a terminal (issue 28): times read as times, a
mistyped group reads alike in every command, a resuming group is not called parked, ``dlq drop
--group``, and read-only commands covering every queue of a stack that holds two."""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator
from contextlib import redirect_stdout
from typing import Any

import boto3
import pytest

from constructs_fifo.cli import EXIT_USAGE, EXIT_VIOLATIONS, main
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.dead_jobs.letters import DeadLetter, DeadLetterSender
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from ...ops_world import STACK, World, stack_template, world
from ...runtime_harness import REGION, TABLE_NAME

POISON = "a2"
#: A second stack holding two queues: A in claim mode, B in state mode.
TWO_QUEUES = "TwoStack"
#: A reference to a logical id: Fn::GetAtt's first item or a Ref.
_REFERENCE = re.compile(r'(\["|"Ref": ")(\w+)"')
_NAMES = ("jobs.fifo", "jobs-dlq.fifo", "claims", "groups")


@pytest.fixture(params=["claim", "state"])
def ops(request: pytest.FixtureRequest) -> Iterator[World]:
    yield from world(claim_mode=request.param == "claim")


def _poison(job: Job, *_: Any) -> None:
    raise PermanentJobError(f"job {job.id}: the patch does not apply")


def _queue_template(prefix: str, *, claim_mode: bool) -> dict[str, Any]:
    """ops_world's queue's resources, its names and logical ids prefixed, under ``TwoStack/<prefix>``."""
    text = json.dumps(stack_template(claim_mode=claim_mode))
    for name in _NAMES:
        text = text.replace(f'"{name}"', f'"{prefix.lower()}-{name}"')
    text = text.replace(f"{STACK}/Jobs/", f"{TWO_QUEUES}/{prefix}/")
    text = _REFERENCE.sub(lambda m: f'{m.group(1)}{prefix}{m.group(2)}"', text)
    resources = json.loads(text)["Resources"]
    return {f"{prefix}{logical_id}": resource for logical_id, resource in resources.items()}


def _two_queues() -> None:
    """Deploy TwoStack beside the world's stack (inside its moto)."""
    resources = {
        **_queue_template("A", claim_mode=True),
        **_queue_template("B", claim_mode=False),
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName=TWO_QUEUES, TemplateBody=json.dumps({"Resources": resources})
    )


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def test_claims_show_prints_times_as_a_person_reads_them() -> None:
    for ops in world(claim_mode=True):
        # GIVEN a job running under a live lease of 5 minutes
        store = ClaimStore(TABLE_NAME, ops.dynamodb)
        store.claim(Job("l1", "ws#1", "t", {}, 1, "m-l1", {}), lease_ms=300_000)
        # WHEN its claim is shown as text (piped)
        code, out = ops.cli("claims", "show", "l1")
        # THEN the lease's end, the last write and the TTL are ISO 8601 UTC with how far off they are
        assert code == 0, out
        iso = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"
        assert re.search(rf"lease_expires_at: {iso} \(in [45] min\)", out), out
        assert re.search(rf"updated_at: {iso} \((now|\d s ago)\)", out), out
        assert re.search(rf"expiration: {iso} \(in \d+ d\)", out), out
        # AND no other line is a raw epoch time (the fence is a token, not a time: claim mode's fencing)
        assert not re.search(r"\b1\d{9,12}\b", re.sub(r"(?m)^fence: \d+$", "", out)), out
        # AND the JSON keeps both forms
        claim = ops.cli_json("claims", "show", "l1")["claim"]
        assert claim["updatedAt"].endswith("Z") and isinstance(claim["updatedAtEpochMs"], int)


def test_a_mistyped_group_reads_alike_in_show_and_resume(
    ops: World, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN ws#night parked
    ops.harness.behaviour[POISON] = _poison
    ops.send("ws#night", "a1", POISON)
    ops.drain()
    # WHEN the operator types ws#nigth to `groups show` and to `groups resume`
    shown = ops.cli("groups", "show", "ws#nigth")[0]
    shown_err = capsys.readouterr().err
    resumed = ops.cli("groups", "resume", "ws#nigth", "--yes")[0]
    resumed_err = capsys.readouterr().err
    # THEN both refuse (exit 1) naming the parked group of a close name, in either mode
    assert shown == resumed == EXIT_VIOLATIONS
    for err in (shown_err, resumed_err):
        assert "parked groups with a close name: ws#night" in err, err


def test_a_resuming_group_is_not_listed_as_parked(ops: World) -> None:
    # GIVEN ws#1 parked at its poison job, then resumed (its wake-up not yet delivered)
    ops.harness.behaviour[POISON] = _poison
    ops.send("ws#1", "a1", POISON, "a3")
    ops.drain()
    assert ops.cli_json("status")["queues"][0]["parkedGroups"] == ["ws#1"]
    assert ops.cli("groups", "resume", "ws#1", "--skip-dead", "--yes")[0] == 0
    # WHEN status reads it
    queue = ops.cli_json("status")["queues"][0]
    out = ops.cli("status")[1]
    # THEN it is resuming, not parked
    assert (queue["parkedGroups"], queue["resumingGroups"]) == ([], ["ws#1"])
    assert "parked groups: none" in out and "resuming groups: ws#1" in out


def test_dlq_drop_takes_a_group(ops: World) -> None:
    # GIVEN two dead jobs of ws#1 and one of ws#2 in the DLQ
    for group, job in (("ws#1", "d1"), ("ws#1", "d2"), ("ws#2", "d3")):
        ops.send_dead(group, job)
    # WHEN ws#1's are dropped
    code, out = ops.cli("dlq", "drop", "--group", "ws#1", "--yes")
    # THEN both of ws#1's are gone and ws#2's stays
    assert code == 0, out
    assert [m["jobId"] for m in ops.cli_json("dlq", "list")["messages"]] == ["d3"]
    # AND a job id with --group is refused as a usage error
    assert ops.cli("dlq", "drop", "d3", "--group", "ws#2", "--yes")[0] == EXIT_USAGE


def _dead_letter(queue_url: str, group: str, job_id: str) -> None:
    sqs = boto3.client("sqs", region_name=REGION)
    dead = DeadJob(
        job_id=job_id,
        job_type="t",
        error_type="PermanentJobError",
        error="bad",
        attempts=1,
        message_id=f"m-{job_id}",
        at_ms=int(time.time() * 1000),
        reason=DeadReason.PERMANENT,
    )
    body = json.dumps({"jobId": job_id, "type": "t", "payload": {}})
    DeadLetterSender(sqs, queue_url).send(DeadLetter(body=body, group=group, dead=dead))


def test_reads_cover_every_queue_of_a_stack_and_changes_ask_which(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for _ in world(claim_mode=True):
        # GIVEN a stack with two queues, a dead job in each one's DLQ
        _two_queues()
        sqs = boto3.client("sqs", region_name=REGION)
        _dead_letter(sqs.get_queue_url(QueueName="a-jobs-dlq.fifo")["QueueUrl"], "ws#1", "da")
        _dead_letter(sqs.get_queue_url(QueueName="b-jobs-dlq.fifo")["QueueUrl"], "ws#2", "db")
        # WHEN the runbook's first reads run without --queue
        listed = _cli("groups", "list", "--parked", "--stack", TWO_QUEUES)
        dead = _cli("dlq", "list", "--stack", TWO_QUEUES)
        documents = json.loads(_cli("dlq", "list", "--stack", TWO_QUEUES, "--json")[1])
        shown = _cli("dlq", "show", "db", "--stack", TWO_QUEUES)
        # THEN each covers both queues, every block labelled by its queue
        assert listed[0] == dead[0] == shown[0] == 0
        for label in ("TwoStack/A", "TwoStack/B"):
            assert f"groups of {label}" in listed[1] and f"dead-letter queue of {label}" in dead[1]
        assert [(q["queue"], [m["jobId"] for m in q["messages"]]) for q in documents["queues"]] == [
            ("TwoStack/A", ["da"]),
            ("TwoStack/B", ["db"]),
        ]
        # AND when each died reads as a time, how long ago beside it
        died = r"^da\tws#1\t.*\t\d{4}-\d\d-\d\dT[\d:.]+Z \((now|\d+ s ago)\)\t"
        assert re.search(died, dead[1], re.MULTILINE), dead[1]
        # AND a read of one job finds it where it is, saying where it is not
        assert "(TwoStack/B)" in shown[1] and "note: the dead-letter queue of TwoStack/A holds no" in shown[1]
        # AND `jobs show` finds a job in the queue that knows it, naming the queue it could not read
        store = ClaimStore("a-claims", boto3.client("dynamodb", region_name=REGION))
        store.claim(Job("ja", "ws#1", "t", {}, 1, "m-ja", {}), lease_ms=300_000)
        code, out = _cli("jobs", "show", "ja", "--stack", TWO_QUEUES)
        assert code == 4 and "# job ja (TwoStack/A)" in out and "status: running" in out, out
        assert "note: job 'ja': TwoStack/B is in state mode" in out
        # AND a read that fits one mode reads the queues of that mode
        code = _cli("claims", "show", "nope", "--stack", TWO_QUEUES)[0]
        assert code == EXIT_VIOLATIONS  # no claim anywhere: refused as on one queue
        # AND a change still asks which queue, naming both
        capsys.readouterr()
        code, _ = _cli("groups", "resume", "ws#1", "--stack", TWO_QUEUES, "--yes")
        err = capsys.readouterr().err
        assert code == 3 and "TwoStack/A" in err and "TwoStack/B" in err and "--queue" in err
        # AND so does a page of groups (a page token is one queue's)
        assert _cli("groups", "list", "--max-items", "1", "--stack", TWO_QUEUES)[0] == 3
