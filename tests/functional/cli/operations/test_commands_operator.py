"""The operations commands as an operator meets them at 3 a.m.: when they ask, what a refusal's fix
says, a malformed body, a seq given up, a parked group's bookkeeping (issue 21's operator items).

On in-process moto with the real runtime (:mod:`tests.functional.ops_world`), both modes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_VIOLATIONS, main
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from ...ops_world import STACK, World, world

POISON = "a2"


@pytest.fixture(params=["claim", "state"])
def ops(request: pytest.FixtureRequest) -> Iterator[World]:
    yield from world(claim_mode=request.param == "claim")


@pytest.fixture
def state_ops() -> Iterator[World]:
    yield from world(claim_mode=False)


def _poison(job: Job, *_: Any) -> None:
    raise PermanentJobError(f"job {job.id}: the patch does not apply")


def _parked(ops: World) -> None:
    ops.harness.behaviour[POISON] = _poison
    ops.send("ws#1", "a1", POISON, "a3")
    ops.drain()


def _run(*argv: str, stdout_tty: bool = False) -> tuple[int, str, str]:
    """``constructs-fifo ARGV --stack OpsStack``: exit code, stdout, stderr."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = Terminal() if stdout_tty else io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([*argv, "--stack", STACK])
    return code, out.getvalue(), err.getvalue()


def _answer(monkeypatch: pytest.MonkeyPatch, answer: str, asked: list[str]) -> None:
    """A terminal on stdin where the operator types ``answer``."""
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)

    def typed(prompt: str = "") -> str:
        asked.append(prompt)
        return answer

    monkeypatch.setattr("builtins.input", typed)


# --- item 1: the confirmation rule ---------------------------------------------------------------------


def test_without_a_terminal_on_stdin_a_mutator_refuses_unless_yes_or_dry_run(ops: World) -> None:
    # GIVEN a parked group, and a script (stdin is not a terminal) that passes neither --yes nor --dry-run
    _parked(ops)
    before = ops.snapshot()
    # WHEN it resumes the group
    code, out, err = _run("groups", "resume", "ws#1", "--skip-dead")
    # THEN refused (exit 1), nothing changed, one line naming --yes and --dry-run, each ready to paste
    assert code == EXIT_VIOLATIONS
    assert ops.snapshot() == before
    assert len(err.splitlines()) == 1
    assert "stdin is not a terminal" in err
    target = "--region us-east-1 --stack OpsStack"
    assert f"`constructs-fifo groups resume ws#1 --skip-dead --yes {target}`" in err
    assert f"`constructs-fifo groups resume ws#1 --skip-dead --dry-run {target}`" in err
    # AND with --json as well it refuses (no JSON document pretends it acted)
    code, out, _ = _run("groups", "resume", "ws#1", "--skip-dead", "--json")
    assert (code, out, ops.snapshot() == before) == (EXIT_VIOLATIONS, "", True)
    # AND --dry-run and --yes need no terminal
    assert _run("groups", "resume", "ws#1", "--skip-dead", "--dry-run")[0] == 0
    assert ops.snapshot() == before
    code, out, _ = _run("groups", "resume", "ws#1", "--skip-dead", "--yes")
    assert code == 0 and "resumed group ws#1" in out


def test_json_on_a_terminal_asks_on_stderr_and_prints_only_the_document(
    ops: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a parked group and an operator at a terminal who answers no
    _parked(ops)
    asked: list[str] = []
    _answer(monkeypatch, "n", asked)
    before = ops.snapshot()
    # WHEN the resume runs with --json on the terminal THEN it asks (the question on stderr), and no
    # changes nothing
    code, out, err = _run("groups", "resume", "ws#1", "--skip-dead", "--json", stdout_tty=True)
    assert code == EXIT_VIOLATIONS and len(asked) == 1
    assert "groups resume: go ahead? [y/N]" in err and "will resume group ws#1" in err
    assert "go ahead" not in out
    assert ops.snapshot() == before
    # WHEN the operator answers yes THEN stdout is the JSON document alone
    _answer(monkeypatch, "y", asked)
    code, out, err = _run("groups", "resume", "ws#1", "--skip-dead", "--json", stdout_tty=True)
    assert code == 0 and len(asked) == 2
    assert json.loads(out)["done"][0].startswith("resumed group ws#1")


def test_stdout_into_tee_still_asks(ops: World, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a parked group and `... | tee incident.log`: stdin a terminal, stdout a pipe
    _parked(ops)
    asked: list[str] = []
    _answer(monkeypatch, "", asked)
    before = ops.snapshot()
    # WHEN the resume runs THEN it asks, and Enter (no answer) is a no
    code, out, err = _run("groups", "resume", "ws#1", "--skip-dead")
    assert code == EXIT_VIOLATIONS and len(asked) == 1
    assert "go ahead? [y/N]" in err and "nothing was changed" in out
    assert ops.snapshot() == before


# --- item 2: the whole-DLQ redrive after `groups resume --skip-dead` of a job with a seq ---------------


def test_the_runbooks_whole_dlq_redrive_leaves_a_given_up_seq_and_a_malformed_body(state_ops: World) -> None:
    # GIVEN the runbook's path: ws#s parked at seq 1, resumed with --skip-dead (seq 1 given up); a job
    # of another group dead under CONTINUE; and a malformed body in the DLQ
    ops = state_ops
    ops.harness.behaviour["s1"] = _poison
    ops.send_seq("ws#s", ("s0", 0), ("s1", 1), ("s2", 2))
    ops.drain()
    assert _run("groups", "resume", "ws#s", "--skip-dead", "--yes")[0] == 0
    ops.drain()
    ops.harness.policy = DeadJobPolicy.CONTINUE
    ops.harness.behaviour["t1"] = _poison
    ops.send("ws#t", "t1")
    ops.drain()
    ops.harness.behaviour.clear()
    ops.sqs.send_message(
        QueueUrl=ops.dlq_url, MessageBody="not json", MessageGroupId="ws#m", MessageDeduplicationId="m1"
    )
    before = ops.snapshot()
    # WHEN the runbook's dry run runs THEN it says what stays and why: s1 would be skipped, the malformed
    # body would park its group again; and it forgets t1's death (it runs again)
    code, out, _ = _run("dlq", "redrive", "--reset", "--dry-run")
    assert code == 0, out
    assert ops.snapshot() == before
    assert "left in the DLQ: job s1 (group ws#s) carries seq 1, at or below group 'ws#s''s last seq 2" in out
    assert "malformed body" in out and "parks group ws#m again" in out
    assert "make group ws#t forget that job t1 died (it runs again)" in out
    assert "would send job t1 (group ws#t" in out
    # WHEN it runs THEN t1 goes back and runs; s1 and the malformed body stay in the DLQ
    code, out, _ = _run("dlq", "redrive", "--reset", "--yes")
    assert code == 0, out
    ops.drain()
    assert "t1" in ops.harness.runs
    left = ops.cli_json("dlq", "list")["messages"]
    assert sorted((m["group"], m["jobId"]) for m in left) == [("ws#m", None), ("ws#s", "s1")]
    assert ops.cli_json("groups", "list", "--parked")["groups"] == []


# --- item 3: a parked group's bookkeeping (state mode) -------------------------------------------------


def test_a_parked_groups_last_seq_buffered_and_kept_seqs_are_its_own(state_ops: World) -> None:
    # GIVEN a state-mode group with seqs parked at seq 1, with seq 2 and 3 kept behind it
    ops = state_ops
    ops.harness.behaviour["s1"] = _poison
    ops.send_seq("ws#s", ("s0", 0), ("s1", 1), ("s2", 2), ("s3", 3))
    ops.drain()
    # WHEN the parked groups are listed THEN its row has its last seq (0), as the state says
    row = ops.cli_json("groups", "list", "--parked")["groups"][0]
    assert (row["group"], row["lastSeq"]) == ("ws#s", 0)
    assert row["lastSeq"] == ops.cli_json("state", "show", "ws#s")["lastSeq"]
    _, out, _ = _run("groups", "list", "--parked")
    assert out.splitlines()[2].split("\t")[5] == "0"
    # WHEN the group is shown THEN each kept job carries its own seq, beside its kept position
    kept = ops.cli_json("groups", "show", "ws#s")["kept"]
    assert [(k["jobId"], k["seq"]) for k in kept] == [("s1", 1), ("s2", 2), ("s3", 3)]
    _, out, _ = _run("groups", "show", "ws#s")
    header = next(line for line in out.splitlines() if line.startswith("position"))
    assert header.split("\t") == ["position", "seq", "job", "type", "message"]


def test_a_long_kept_list_says_how_many_more(ops: World) -> None:
    # GIVEN a group parked with 13 kept jobs WHEN it is shown THEN 10 are listed and the 3 more are named
    ops.harness.behaviour[POISON] = _poison
    ops.send("ws#1", "a1", POISON, *(f"b{i}" for i in range(12)))
    ops.drain()
    code, out, _ = _run("groups", "show", "ws#1")
    assert code == 0
    assert "kept jobs: 13 (the first 10 below)" in out
    assert "... and 3 more kept job(s), in order" in out


# --- item 4: a malformed body, by message id --------------------------------------------------------------


def test_a_malformed_head_is_named_by_its_message_shown_dropped_and_skipped(ops: World) -> None:
    # GIVEN a group parked at a malformed body
    ops.sqs.send_message(
        QueueUrl=ops.queue_url, MessageBody="{not json", MessageGroupId="ws#m", MessageDeduplicationId="m1"
    )
    ops.send("ws#m", "m2")
    ops.drain()
    # WHEN it is shown THEN the dead job and type say what they are, not blank
    code, out, _ = _run("groups", "show", "ws#m")
    assert "dead job: none: message " in out and "has a malformed body (no job id)" in out
    assert "type: unknown (a malformed body)" in out
    # WHEN its resume without --skip-dead is planned THEN refused: it can never run; the fix is --skip-dead
    code, _, err = _run("groups", "resume", "ws#m", "--dry-run")
    assert code == EXIT_VIOLATIONS
    assert "dies again at once" in err
    assert "`constructs-fifo groups resume ws#m --skip-dead --region us-east-1 --stack OpsStack`" in err
    # WHEN it is skipped THEN the done line names the message, not "job None"
    code, out, _ = _run("groups", "resume", "ws#m", "--skip-dead", "--yes")
    assert code == 0 and "job None" not in out and "(a malformed body) to the DLQ" in out
    ops.drain()
    # AND the DLQ message is shown and dropped by its message id
    message_id = ops.cli_json("dlq", "list")["messages"][0]["messageId"]
    shown = ops.cli_json("dlq", "show", "--message-id", message_id)["messages"]
    assert [(m["messageId"], m["jobId"], m["body"]) for m in shown] == [(message_id, None, "{not json")]
    code, out, _ = _run("dlq", "drop", "--message-id", message_id, "--yes")
    assert code == 0, out
    assert ops.cli_json("dlq", "list")["messages"] == []
    # AND naming neither a job nor a message is an argument error
    assert _run("dlq", "show")[0] == 2


# --- item 5: a refusal's fix, ready to paste -------------------------------------------------------------


def test_every_fix_names_real_values_and_this_invocations_region(ops: World) -> None:
    # GIVEN a job dead in the DLQ (skipped from its parked group)
    _parked(ops)
    assert _run("groups", "resume", "ws#1", "--skip-dead", "--yes")[0] == 0
    ops.drain()
    # WHEN a claim of it is released (claim mode) or a claim command meets state mode
    _, _, err = _run("claims", "release", POISON, "--region", "us-east-1")
    # THEN the fix names the job itself and the same region and stack, no placeholder
    assert "JOB" not in err and "{" not in err
    if ops.claim_mode:
        assert "`constructs-fifo claims reset a2 --region us-east-1 --stack OpsStack`" in err
    else:
        assert "`constructs-fifo dlq show a2 --region us-east-1 --stack OpsStack`" in err


# --- item 8: one --json convention ------------------------------------------------------------------------


def _keys(document: Any, skip: frozenset[str] = frozenset({"state", "attempts"})) -> set[str]:
    """Every key of ``document``, not descending into the user's own values (``skip``)."""
    if isinstance(document, dict):
        found = set(document)
        for key, value in document.items():
            if key not in skip or (isinstance(value, dict) and "version" in value):  # a state view
                found |= _keys(value, skip)
        return found
    if isinstance(document, list):
        return set().union(*(_keys(item, skip) for item in document)) if document else set()
    return set()


def test_every_json_document_is_camel_case_with_iso_times_and_their_epoch(ops: World) -> None:
    # GIVEN a parked group, then its dead job skipped to the DLQ
    _parked(ops)
    documents = [ops.cli_json("status"), ops.cli_json("groups", "list", "--parked")]
    shown = ops.cli_json("groups", "show", "ws#1")
    documents += [shown, ops.cli_json("groups", "resume", "ws#1", "--skip-dead", "--dry-run")]
    assert ops.cli("groups", "resume", "ws#1", "--skip-dead", "--yes")[0] == 0
    ops.drain()
    documents.append(ops.cli_json("dlq", "list"))
    documents.append(
        ops.cli_json("claims", "show", POISON) if ops.claim_mode else ops.cli_json("state", "show", "ws#1")
    )
    # WHEN their keys are read THEN every one is camelCase (no snake_case, no PascalCase)
    keys = set().union(*(_keys(document) for document in documents))
    assert {key for key in keys if "_" in key or key[:1].isupper()} == set()
    # AND a time is ISO 8601 UTC with its epoch milliseconds beside
    dead = shown["dead"]
    assert dead["at"].endswith("Z") and isinstance(dead["atEpochMs"], int)
    last = documents[-1]
    if ops.claim_mode:
        claim = last["claim"]
        assert claim["updatedAt"].endswith("Z") and isinstance(claim["updatedAtEpochMs"], int)
    else:
        assert last["updatedAt"].endswith("Z") and isinstance(last["updatedAtEpochMs"], int)


def test_a_typo_names_every_equally_close_parked_group(ops: World) -> None:
    # GIVEN four parked groups equally close to a mistyped one
    groups = [f"ws#night{i}" for i in range(1, 5)]
    for index, group in enumerate(groups):
        ops.harness.behaviour[f"p{index}"] = _poison
        ops.send(group, f"p{index}")
    ops.drain()
    # WHEN the operator types ws#night THEN all four are named, and the sentence ends before its fix
    code, _, err = _run("groups", "resume", "ws#night", "--skip-dead")
    assert code == EXIT_VIOLATIONS
    assert f"parked groups with a close name: {', '.join(groups)}. Fix:" in err
    assert "?." not in err
