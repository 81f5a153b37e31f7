"""What the CLI shows: the demo's tables, the divergence table, the drain's progress bar.

``rich`` is a base dependency, not an extra: every command that talks to AWS must work on a plain
``pip install constructs-fifo``, and the operations commands print tables. It is pure Python (with
``pygments`` and ``markdown-it-py``), and neither the runtime nor the function's asset ever imports
it, so the Lambda side does not pay for it; lazy imports with a plain-text fallback would give every
table two renderings to keep in step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from constructs_fifo.local.demo.scenario_divergence import DivergenceResult
from constructs_fifo.local.demo.scenario_verify import DemoResult

__all__ = ["DrainProgress", "console", "drain_progress", "print_demo", "print_divergence", "print_status"]


def console(*, stderr: bool = False) -> Console:
    """A console without syntax highlighting (stderr for progress when stdout carries data).

    Its ``log`` lines carry the time but not the source location (``steps.py:246``): on an 80-column
    terminal that column took about 24 columns from every line, for something only a developer reads.
    """
    return Console(stderr=stderr, highlight=False, log_path=False)


class DrainProgress:
    """Progress bars, one per queue drained, each appearing (and starting its clock) when first reported.

    Call it with ``(queue label, done, total)``: a
    :data:`~constructs_fifo.local.demo.steps.ProgressCallback`. A queue drained again (after a resume)
    gets a new bar.
    """

    def __init__(self, bar: Progress) -> None:
        self._bar = bar
        self._tasks: dict[str, TaskID] = {}

    def __call__(self, label: str, done: int, total: int) -> None:
        key = f"{label}#{total}"
        if key not in self._tasks:
            self._tasks[key] = self._bar.add_task(label, total=total)
        self._bar.update(self._tasks[key], completed=done, total=total)

    def finish(self) -> None:
        """Show every bar as complete (the last poll may have come before the end of its drain)."""
        for task in self._bar.tasks:
            if task.total is not None:
                self._bar.update(task.id, completed=task.total)


@contextlib.contextmanager
def drain_progress(out: Console) -> Iterator[DrainProgress]:
    """A :class:`DrainProgress` on ``out``, for the duration of the block."""
    with Progress(
        TextColumn("draining {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
    ) as bar:
        yield DrainProgress(bar)


def _calls(result: DemoResult, role: str) -> str:
    calls = result.calls_per_job.get(role)
    if not calls:
        return "not measured (--no-drain)"
    return f"{calls['runtime']:.2f} runtime + {calls['job_code']:.2f} job code"


def print_demo(out: Console, result: DemoResult) -> None:
    """The demo's summary table, its violations, and the verdict."""
    counts = result.counts
    table = Table(title="constructs-fifo demo", show_header=True)
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("workspace jobs sent (state mode)", f"{counts['jobs']} ({counts['messages_sent']} messages)"),
        (
            "notifications sent (claim mode)",
            f"{counts['notifications']} ({counts['notification_messages_sent']} messages)",
        ),
        (
            "duplicates sent",
            f"{counts['duplicates_same_dedup_id']} same dedup id, {counts['duplicates_new_dedup_id']} new",
        ),
        ("collapsed by SQS", str(counts["collapsed_by_sqs"])),
        (
            "skipped by the workspace state / by claims",
            f"{counts['skipped_by_state']} / {counts['skipped_by_claims']}",
        ),
        (
            "transient failures retried",
            f"{counts['transient_failures_recovered']} of {counts['transient_failures']} applied after retry",
        ),
        (
            "failing until the last attempt",
            f"{counts['last_attempt_applied']} of {counts['last_attempt']} applied on its last attempt",
        ),
        (
            "poison (sent twice) dead-lettered",
            f"{counts['poison_dead_lettered']} of {counts['poison_sent']} "
            f"({counts['poison_dead_letter_messages']} messages)",
        ),
        ("groups parked, resumed skipping the dead job", str(counts["groups_resumed"])),
        ("deliveries to the functions", f"{counts['deliveries']} ({counts['messages_delivered']} messages)"),
        ("DynamoDB calls per job, workspaces", _calls(result, "workspaces")),
        ("DynamoDB calls per job, notifications", _calls(result, "notifications")),
        ("violations", str(counts["violations"])),
    ]
    rows.extend((f"time: {phase}", f"{seconds:.1f} s") for phase, seconds in result.timings.seconds.items())
    rows.append(("elapsed", f"{sum(result.timings.seconds.values()):.1f} s"))
    for name, value in rows:
        table.add_row(name, value)
    out.print(table)
    for violation in result.violations:
        out.print(f"[red]violation[/red] {violation.kind}: {violation.message}", markup=True)
    if result.passed:
        out.print(
            "[green]verified[/green]: each workspace applied its jobs once and in order, every notification "
            "recorded once, only the poison jobs in the DLQ, no group parked, queues empty"
        )
    print_status(out, result.status)


def print_status(out: Console, statuses: list[dict[str, Any]]) -> None:
    """``constructs-fifo status`` of the demo's queues, as it left them (its ``--json`` documents)."""
    if not statuses:
        return
    table = Table(title="constructs-fifo status")
    for column in (
        "queue",
        "mode",
        "visible / in flight",
        "DLQ",
        "parked",
        "gaps",
        "expired claims",
        "alarms",
    ):
        # fold, never cut: a queue's construct path is what an operator pastes into `--queue`
        table.add_column(column, overflow="fold")
    for status in statuses:
        table.add_row(
            str(status["queue"]),
            str(status["mode"]),
            f"{status['visible']} / {status['inFlight']}",
            str(status["deadLetterQueueDepth"]),
            ", ".join(status["parkedGroups"]) or "none",
            ", ".join(status["openSequenceGaps"]) or "none",
            ", ".join(status["expiredInFlightClaims"]) or "none",
            ", ".join(status["alarmsInAlarm"]) or "none",
        )
    out.print(table)


def print_divergence(out: Console, result: DivergenceResult) -> None:
    """The three workspaces side by side, and the verdict."""
    table = Table(title="Same events, three producers (FIFO delivered each as sent)")
    table.add_column("")
    for outcome in result.outcomes:
        table.add_column(outcome.title)
    for label, *values in result.rows():
        table.add_row(label, *values)
    out.print(table)
    out.print(result.verdict())
