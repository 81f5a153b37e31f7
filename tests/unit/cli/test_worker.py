"""``constructs-fifo worker``'s command line: its flags, and a wrong environment as one line, exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from constructs_fifo.cli import build_parser, main
from constructs_fifo.cli.worker import log_format, reads_app_stack
from constructs_fifo.runtime.constants import ENV_QUEUE_URL


def test_the_flags_parse_into_the_workers_options() -> None:
    # GIVEN the worker's flags WHEN parsed THEN each is read with its type
    args = build_parser().parse_args(
        [
            "worker",
            "--slots",
            "8",
            "--heartbeat-interval",
            "15",
            "--grace-seconds",
            "90",
            "--wait-time-seconds",
            "5",
        ]
    )
    assert (args.command, args.slots, args.heartbeat_interval, args.grace_seconds) == (
        "worker",
        8,
        15.0,
        90.0,
    )
    assert (args.wait_time_seconds, args.stack, args.batch_size) == (5, None, None)


def test_a_long_poll_past_sqs_limit_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a wait ReceiveMessage does not take WHEN parsed THEN argparse refuses it, naming the range
    with pytest.raises(SystemExit):
        build_parser().parse_args(["worker", "--wait-time-seconds", "21"])
    assert "0 to 20 seconds" in capsys.readouterr().err


def test_a_missing_environment_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # GIVEN a container environment without the runtime's variables, outside any CDK app
    for name in [n for n in os.environ if n.startswith("CONSTRUCTS_FIFO_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    # WHEN the worker starts
    code = main(["worker"])
    # THEN it exits 2 with one line naming what is missing
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("constructs-fifo worker: ")
    assert "CONSTRUCTS_FIFO_" in err
    assert "give --stack NAME" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "environ", "app_dir", "expected"),
    [
        (["worker"], {}, True, True),
        (["worker"], {ENV_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/1/q.fifo"}, True, False),
        (["worker", "--stack", "TeamJobs"], {}, True, False),
        (["worker"], {}, False, False),
    ],
    ids=["app-dir-no-environment", "configured-container", "stack-given", "not-an-app-dir"],
)
def test_the_worker_takes_the_apps_stack_only_when_nothing_else_says_where(
    tmp_path: Path, argv: list[str], environ: dict[str, str], app_dir: bool, expected: bool
) -> None:
    # GIVEN a directory that is (or is not) a CDK app's, and the worker's environment
    if app_dir:
        (tmp_path / "cdk.json").write_text('{"app": "python3 app.py"}')
    args = build_parser().parse_args(argv)
    # WHEN the command decides where its settings come from
    # THEN only a bare `worker` in an app's directory, with no queue configured, reads the app's stack
    assert reads_app_stack(args, tmp_path, environ) is expected


@pytest.mark.parametrize(
    ("chosen", "stack", "terminal", "expected"),
    [
        (None, "TeamJobs", True, "text"),  # a person at a laptop
        (None, "TeamJobs", False, "json"),  # piped to a file
        (None, None, True, "json"),  # a container configured by its environment, given a terminal
        (None, None, False, "json"),  # a container
        ("json", "TeamJobs", True, "json"),
        ("text", None, False, "text"),
    ],
)
def test_the_log_format_is_text_only_for_a_persons_run_unless_chosen(
    chosen: str | None, stack: str | None, terminal: bool, expected: str
) -> None:
    # GIVEN the flag, where the settings come from and whether stdout is a terminal
    # WHEN / THEN the worker's lines are text only at a terminal with a stack's settings
    assert log_format(chosen, stack=stack, terminal=terminal) == expected
