"""``constructs-fifo drain`` on stderr (cli/drain_view.py) and its exits: a progress line on a terminal
only, jobs by outcome, the statistics so far on Ctrl-C, exit 3 when no job can run."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_ENVIRONMENT, EXIT_INTERRUPTED, EXIT_OK, main
from constructs_fifo.cli import app as cli_app
from constructs_fifo.cli.drain_view import DrainView
from constructs_fifo.local.event_source.reports import DrainStats

URL = "http://localhost:1/123456789012/jobs.fifo"
LOG = Path("/state/constructs-fifo/app-0123abcd/logs/fn.3.log")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_progress_line_is_rewritten_in_place_and_cleared_for_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a drain's view on a terminal 200 columns wide, following statistics that grow
    monkeypatch.setenv("COLUMNS", "200")
    stream = Terminal()
    view = DrainView(stream, URL)
    stats = DrainStats()
    view.start(stats)
    stats.add(records=3, outcomes={"succeeded": 2, "duplicate": 1})
    # WHEN a batch ends, then a line is said, then the drain finishes
    view.redraw()
    view.say("waiting on jobs.fifo")
    view.finish(stats, log_path=LOG)
    text = stream.getvalue()
    # THEN the progress line was drawn in place, with the records and the jobs by outcome
    progress = (
        r"\rconstructs-fifo: draining jobs\.fifo: 3 records, 2 succeeded, 1 duplicate, 0 retried, 0 dead, "
        r"0 kept · \d+ s\x1b\[K"
    )
    assert re.search(progress, text)
    # AND cleared before the said line, which ends whole
    assert "\r\x1b[Kconstructs-fifo: waiting on jobs.fifo\n" in text
    # AND the summary comes last, on a cleared line, naming the log
    assert text.endswith(
        "\r\x1b[Kconstructs-fifo: drained jobs.fifo: jobs 2 succeeded, 1 duplicate, 0 retried, 0 dead, "
        f"0 kept; 3 records in 0 batches, 0 failed invocations, 0.0 s; the function's log: {LOG}\n"
    )


def test_the_progress_line_is_cut_to_the_terminal_s_width(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a terminal 40 columns wide
    monkeypatch.setenv("COLUMNS", "40")
    stream = Terminal()
    view = DrainView(stream, URL)
    view.start(DrainStats())
    # WHEN the progress line is drawn
    view.redraw()
    view.finish(DrainStats(skipped="not drained"), log_path=LOG)
    # THEN it never wraps: shorter than the width, its cut shown
    drawn = stream.getvalue().split("\r")[1].removesuffix("\x1b[K")
    assert len(drawn) == 39 and drawn.endswith("…")


def test_piped_there_is_no_progress_line_only_lines_and_the_summary() -> None:
    # GIVEN a drain's view on a pipe
    stream = io.StringIO()
    view = DrainView(stream, URL)
    stats = DrainStats()
    view.start(stats)
    stats.add(batches=2, records=4, outcomes={"succeeded": 1, "dead": 2, "groups_parked": 1, "kept": 1})
    # WHEN batches end and the drain finishes
    view.redraw()
    view.say("a line")
    view.finish(stats, log_path=LOG)
    # THEN stderr holds the line and the summary, nothing rewritten; dead, parked and kept are not successes
    assert stream.getvalue() == (
        "constructs-fifo: a line\n"
        "constructs-fifo: drained jobs.fifo: jobs 1 succeeded, 0 duplicate, 0 retried, 2 dead (1 group "
        f"parked), 1 kept; 4 records in 2 batches, 0 failed invocations, 0.0 s; the function's log: {LOG}\n"
    )


def _runner(drain: Any) -> type:
    class Runner:
        queue = SimpleNamespace(url=URL)
        log_path = LOG

        @classmethod
        def from_stack(cls, stack: str, **kwargs: object) -> Any:
            return cls()

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc_info: object) -> None:
            pass

    Runner.drain = drain  # type: ignore[attr-defined]
    return Runner


def test_ctrl_c_prints_the_statistics_so_far_and_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a drain interrupted by Ctrl-C after one batch of five jobs
    def drain(self: object, *, stats: DrainStats, **kwargs: object) -> DrainStats:
        stats.add(batches=1, records=5, deleted=5, outcomes={"succeeded": 4, "dead": 1})
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_app, "EventSourceRunner", _runner(drain))
    # WHEN drain runs
    code = main(["drain", "--stack", "Jobs", "--endpoint-url", "http://localhost:1"])
    # THEN it exits 130, stdout holds the statistics so far, stderr their summary
    captured = capsys.readouterr()
    assert code == EXIT_INTERRUPTED
    printed = json.loads(captured.out)
    assert (printed["batches"], printed["deleted"]) == (1, 5)
    assert printed["outcomes"] == {
        "succeeded": 4,
        "duplicate": 0,
        "retried": 0,
        "dead": 1,
        "kept": 0,
        "buffered": 0,
        "paced": 0,
        "cancelled": 0,
    }
    assert printed["groupsParked"] == 0
    assert (
        "constructs-fifo: interrupted the drain of jobs.fifo: jobs 4 succeeded, 0 duplicate, 0 retried, "
        "1 dead, 0 kept; 5 records in 1 batch" in captured.err
    )
    assert captured.err.strip().splitlines()[-1] == "constructs-fifo: interrupted"


def test_a_drain_stopped_because_no_job_can_run_exits_3_saying_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a drain the runner stopped: the handler cannot be imported
    reason = "function fn cannot run any job: ModuleNotFoundError: No module named 'nosuch'. ..."

    def drain(self: object, *, say: Any, stats: DrainStats, **kwargs: object) -> DrainStats:
        stats.add(batches=1, records=2, handler_errors=1)
        stats.stopped = reason
        say(f"stopped: {reason} (the traceback: {LOG})")
        return stats

    monkeypatch.setattr(cli_app, "EventSourceRunner", _runner(drain))
    # WHEN drain runs
    code = main(["drain", "--stack", "Jobs", "--endpoint-url", "http://localhost:1"])
    # THEN it exits 3 (the deployment stopped it), the JSON says why, stderr names the error and the log
    captured = capsys.readouterr()
    assert code == EXIT_ENVIRONMENT
    assert json.loads(captured.out)["stopped"] == reason
    assert f"constructs-fifo: stopped: {reason} (the traceback: {LOG})\n" in captured.err
    assert "constructs-fifo: stopped the drain of jobs.fifo: jobs 0 succeeded" in captured.err


def test_a_drain_counts_jobs_by_outcome_in_its_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a drain whose records were all deleted, some of them dead, parked or kept
    def drain(self: object, *, stats: DrainStats, **kwargs: object) -> DrainStats:
        stats.add(
            batches=1,
            records=6,
            deleted=6,
            outcomes={"succeeded": 3, "dead": 2, "groups_parked": 1, "kept": 1},
        )
        return stats

    monkeypatch.setattr(cli_app, "EventSourceRunner", _runner(drain))
    # WHEN drain runs
    code = main(["drain", "--stack", "Jobs", "--endpoint-url", "http://localhost:1"])
    # THEN the JSON says what happened to each job, not six successes
    printed = json.loads(capsys.readouterr().out)
    assert code == EXIT_OK
    assert printed["deleted"] == 6
    assert {k: v for k, v in printed["outcomes"].items() if v} == {
        "succeeded": 3,
        "dead": 2,
        "kept": 1,
    }
    assert printed["groupsParked"] == 1
