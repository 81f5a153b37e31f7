"""What the CLI shows: progress lines fit an 80-column terminal."""

from __future__ import annotations

import io

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
