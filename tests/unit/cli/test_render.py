"""What the CLI shows: progress lines fit an 80-column terminal."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from constructs_fifo.cli import render


def test_a_log_line_keeps_the_width_of_an_80_column_terminal_for_its_text() -> None:
    # GIVEN the CLI's console on an 80-column terminal
    out = render.console()
    out.file = io.StringIO()
    out.width = 80
    line = "draining 550 messages of AgentJobs/Workspaces through the handler"  # 66 columns
    # WHEN the demo logs a line
    out.log(line)
    # THEN it is one line: the time (11 columns) and the text, with no source location eating the rest
    printed = out.file.getvalue().splitlines()
    assert len(printed) == 1
    assert printed[0].rstrip().endswith(line)
    assert ".py:" not in printed[0]


def test_the_demo_status_table_folds_long_queue_paths_instead_of_cutting_them_at_80_columns() -> None:
    # GIVEN the status of a queue whose construct path is longer than its column at 80 columns
    status = {
        "queue": "AgentJobs/Notifications",
        "mode": "claim",
        "visible": 0,
        "inFlight": 0,
        "deadLetterQueueDepth": 2,
        "parkedGroups": ["ws#night-shift-42"],
        "openSequenceGaps": [],
        "expiredInFlightClaims": [],
        "alarmsInAlarm": [],
    }
    out = Console(file=io.StringIO(), width=80, record=True)

    # WHEN the demo prints it
    render.print_status(out, [status])

    # THEN nothing is cut with an ellipsis: the path is folded onto more lines of its cell
    text = out.export_text()
    assert "…" not in text
    assert "AgentJobs" in text


ARN = "arn:aws:cloudformation:us-east-1:123456789012:stack/AgentJobs/" + "0f1e2d3c-" * 12 + "end"
URL = "http://localhost:4566/123456789012/AgentJobs-NotificationsQueue9A1B2C3D-aBcDeFgHiJkL.fifo"


def test_off_a_terminal_nothing_is_wrapped_and_log_lines_carry_no_padding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN the CLI's consoles, stdout and stderr captured (not a terminal: a file or a pipe)
    out, err = render.console(), render.console(stderr=True)
    # WHEN a deploy echoes an ARN, and the demo logs a URL
    err.print(f"Stack ARN: {ARN}", markup=False, style="dim")
    out.log(f"draining {URL} through the handler")
    captured = capsys.readouterr()
    # THEN each is one whole line, and no line ends in the spaces rich pads to its width
    assert captured.err == f"Stack ARN: {ARN}\n"
    [line] = captured.out.splitlines()
    assert line.endswith(f"draining {URL} through the handler")


def test_a_table_too_wide_for_the_terminal_shows_every_id_whole() -> None:
    # GIVEN the status of the sample's claim-mode queue, on a 60-column terminal
    status = {
        "queue": "AgentJobs/Notifications",
        "mode": "claim",
        "visible": 0,
        "inFlight": 0,
        "deadLetterQueueDepth": 2,
        "parkedGroups": ["ws#night-shift-42"],
        "openSequenceGaps": [],
        "expiredInFlightClaims": [],
        "alarmsInAlarm": ["AgentJobs-NotificationsDeadLetters-1A2B3C"],
    }
    out = Console(file=io.StringIO(), width=60, record=True)
    # WHEN the demo prints it
    render.print_status(out, [status])
    # THEN the path, the group and the alarm are whole, each on one line: nothing cut or folded
    lines = out.export_text().splitlines()
    assert "  queue: AgentJobs/Notifications" in lines
    assert "  parked: ws#night-shift-42" in lines
    assert "  alarms: AgentJobs-NotificationsDeadLetters-1A2B3C" in lines


def test_a_table_that_fits_is_a_table() -> None:
    out = Console(file=io.StringIO(), width=200, record=True)
    render.print_table(out, "t", ("queue", "mode"), [("AgentJobs/Notifications", "claim")])
    text = out.export_text()
    assert "┃ queue " in text
    assert "│ AgentJobs/Notifications │ claim │" in text
