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

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from constructs_fifo.local.demo.scenario_divergence import DivergenceResult
from constructs_fifo.local.demo.scenario_verify import DemoResult

__all__ = ["DrainProgress", "console", "drain_progress", "print_demo", "print_divergence"]


def console(*, stderr: bool = False) -> Console:
    """A console without syntax highlighting (stderr for progress when stdout carries data)."""
    return Console(stderr=stderr, highlight=False)


class DrainProgress:
    """A progress bar that appears, and starts its clock, when the drain first reports.

    Call it with ``(done, total)`` (a :data:`~constructs_fifo.local.demo.steps.ProgressCallback`).
    """

    def __init__(self, bar: Progress) -> None:
        self._bar = bar
        self._task = bar.add_task("drain", total=None, visible=False, start=False)
        self._started = False

    def __call__(self, done: int, total: int) -> None:
        if not self._started:  # the clock starts with the drain, not with the deploy
            self._bar.start_task(self._task)
            self._started = True
        self._bar.update(self._task, completed=done, total=total, visible=True)

    def finish(self, done: int) -> None:
        """Show ``done`` as the final count (the last poll may have come before the end)."""
        self._bar.update(self._task, completed=done)


@contextlib.contextmanager
def drain_progress(out: Console) -> Iterator[DrainProgress]:
    """A :class:`DrainProgress` on ``out``, for the duration of the block."""
    with Progress(
        TextColumn("draining"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=out
    ) as bar:
        yield DrainProgress(bar)


def print_demo(out: Console, result: DemoResult) -> None:
    """The demo's summary table, its violations, and the verdict."""
    counts = result.counts
    table = Table(title="constructs-fifo demo", show_header=True)
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("jobs sent", f"{counts['jobs']} ({counts['messages_sent']} messages)"),
        (
            "duplicates sent",
            f"{counts['duplicates_sent']} ({counts['duplicates_same_dedup_id']} same dedup id, "
            f"{counts['duplicates_new_dedup_id']} new)",
        ),
        ("collapsed by SQS", str(counts["collapsed_by_sqs"])),
        ("skipped by claims", str(counts["skipped_by_claims"])),
        (
            "transient failures retried",
            f"{counts['transient_failures_recovered']} of {counts['transient_failures']} applied after retry",
        ),
        ("redeliveries (retries, rest of group)", str(counts["redeliveries"])),
        ("poison dead-lettered", f"{counts['poison_dead_lettered']} of {counts['poison_sent']}"),
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
        out.print("[green]verified[/green]: order per workspace, no job applied twice, poison in the DLQ")


def print_divergence(out: Console, result: DivergenceResult) -> None:
    """Both workspaces side by side, and the verdict."""
    table = Table(title="Same events, different producer order (FIFO delivered both faithfully)")
    table.add_column("")
    table.add_column(f"in order ({result.in_order.workspace})")
    table.add_column(f"shuffled ({result.shuffled.workspace})")
    for label, left, right in result.rows():
        table.add_row(label, left, right)
    out.print(table)
    out.print(result.verdict())
