"""What the CLI shows: progress lines fit an 80-column terminal."""

from __future__ import annotations

import io

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
