"""cli/operations/parser.py: every operations command's --help says what it does, and to the DLQ; paging."""

from __future__ import annotations

import pytest

from constructs_fifo.cli import main

LEAVES = [
    ("status",),
    ("groups", "list"),
    ("groups", "show"),
    ("groups", "resume"),
    ("groups", "skip-gap"),
    ("dlq", "list"),
    ("dlq", "show"),
    ("dlq", "redrive"),
    ("dlq", "drop"),
    ("claims", "show"),
    ("claims", "release"),
    ("claims", "reset"),
    ("state", "show"),
]


def _help(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*words, "--help"])
    assert exited.value.code == 0
    # argparse wraps at hyphens too ("--skip-" / "dead"): compare with the line breaks taken out
    return capsys.readouterr().out.replace("-\n", "-").replace("\n", " ").replace("- ", "-")


@pytest.mark.parametrize("words", LEAVES, ids=" ".join)
def test_every_command_help_says_what_it_does_to_the_dlq(
    capsys: pytest.CaptureFixture[str], words: tuple[str, ...]
) -> None:
    # WHEN a command's own --help is read
    text = _help(capsys, *words)
    # THEN it says what the command does to the dead-letter queue (nothing, a peek, a move, a delete)
    assert "DLQ" in " ".join(text.split()), text


def test_the_help_of_drop_and_resume_says_what_leaves_or_enters_the_dlq(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "for good: they cannot be redriven afterwards" in " ".join(_help(capsys, "dlq", "drop").split())
    resume = " ".join(_help(capsys, "groups", "resume").split())
    assert "Without --skip-dead its dead job runs again first" in resume
    assert "With --skip-dead the dead job is sent to the DLQ" in resume
    assert "SQS has no peek" in " ".join(_help(capsys, "dlq", "list").split())


def test_groups_list_takes_the_aws_cli_paging_options(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(_help(capsys, "groups", "list").split())
    assert "--max-items N" in text and "--starting-token TOKEN" in text
    # AND a bad --max-items is refused by the parser with the value and the rule (exit 2)
    with pytest.raises(SystemExit) as exited:
        main(["groups", "list", "--max-items", "0"])
    assert exited.value.code == 2
    assert "0 is below 1" in capsys.readouterr().err
