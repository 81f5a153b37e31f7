"""Every ``constructs-fifo`` line of docs/runbook.md parses with the real parser and runs on the emulator.

A renamed command or flag fails here. The lines run against a claim-mode and a state-mode queue on
in-process moto, each with a parked group whose dead job was then skipped to the DLQ (so GROUP and
JOB name real things); mutators run as written only with ``--dry-run`` (their real runs are the
end-to-end test's), and nothing may exit 3 (environment) or crash.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from constructs_fifo.cli import EXIT_ENVIRONMENT, EXIT_USAGE, build_parser
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from ..ops_world import World, world

RUNBOOK = Path(__file__).resolve().parents[3] / "docs" / "runbook.md"
PLACEHOLDERS = {"GROUP": "ws#1", "JOB": "a2"}
MUTATORS = {("groups", "resume"), ("groups", "skip-gap"), ("dlq", "redrive"), ("dlq", "drop")} | {
    ("claims", "release"),
    ("claims", "reset"),
    ("groups", "hold"),
    ("groups", "release"),
    ("groups", "cancel"),
    ("jobs", "cancel"),
    ("pace", "set"),
}


def runbook_commands() -> list[list[str]]:
    """The argument lists of every line starting with ``constructs-fifo`` in the runbook's code blocks."""
    lines = re.findall(r"^constructs-fifo (.+)$", RUNBOOK.read_text(), flags=re.MULTILINE)
    return [[PLACEHOLDERS.get(word, word) for word in shlex.split(line)] for line in lines]


COMMANDS = runbook_commands()


def test_the_runbook_names_commands() -> None:
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(argv) for argv in COMMANDS])
def test_every_runbook_line_parses(argv: list[str]) -> None:
    # GIVEN a line of the runbook WHEN the real parser reads it THEN it is a valid command line
    build_parser().parse_args(argv)


def _poison(job: Job, *_: object) -> None:
    raise PermanentJobError("bad patch")


@pytest.fixture(params=["claim", "state"], scope="module")
def scenario(request: pytest.FixtureRequest) -> Iterator[World]:
    """A queue whose ws#1 parked at a2, then resumed skipping a2 (now in the DLQ)."""
    for ops in world(claim_mode=request.param == "claim"):
        ops.harness.behaviour["a2"] = _poison
        ops.send("ws#1", "a1", "a2", "a3")
        ops.drain()
        assert ops.cli("groups", "resume", "ws#1", "--skip-dead", "--yes")[0] == 0
        ops.drain()
        yield ops


def test_every_runbook_line_runs_on_the_emulator(scenario: World) -> None:
    for argv in COMMANDS:
        # GIVEN a runbook line (a mutator with --dry-run) WHEN it runs against the scenario
        mutates = tuple(argv[:2]) in MUTATORS
        run = [*argv, "--dry-run"] if mutates and "--dry-run" not in argv else argv
        before = scenario.snapshot() if mutates else None
        code, out = scenario.cli(*run)
        # THEN the environment never fails it; a command of the other mode says so (2);
        # a dry run changes nothing
        assert code != EXIT_ENVIRONMENT, (argv, out)
        if code == EXIT_USAGE:
            assert argv[0] in {"claims", "state"} or argv[:2] == ["groups", "skip-gap"], argv
        if before is not None:
            assert scenario.snapshot() == before, argv
