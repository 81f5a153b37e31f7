"""``constructs-fifo worker``'s command line: its flags, and a wrong environment as one line, exit 2."""

from __future__ import annotations

import os

import pytest

from constructs_fifo.cli import build_parser, main


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
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a container environment without the runtime's variables
    for name in [n for n in os.environ if n.startswith("CONSTRUCTS_FIFO_")]:
        monkeypatch.delenv(name)
    # WHEN the worker starts
    code = main(["worker"])
    # THEN it exits 2 with one line naming what is missing
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("constructs-fifo worker: ")
    assert "CONSTRUCTS_FIFO_" in err
    assert len(err.strip().splitlines()) == 1
