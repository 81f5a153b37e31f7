"""What the CLI shows: the demo's tables, the divergence table, the drain's progress bar, ``describe``'s
lines and ``local serve``'s export lines.

Output fits where it goes. On a terminal, rich wraps text at its width, and a table too wide for it
is printed as one block of ``column: value`` lines per row instead (:func:`print_table`): a queue's
construct path, a job id or an ARN is what an operator pastes, so it is never cut or folded inside a
cell. Anywhere else (a file, a pipe, a CI log) nothing is wrapped at all: the console is
:data:`UNWRAPPED_WIDTH` wide, so every line, URL and ARN stays whole, and the spaces rich pads a log
line with to that width are dropped.

``rich`` is a base dependency, not an extra: every command that talks to AWS must work on a plain
``pip install constructs-fifo``, and the operations commands print tables. It is pure Python (with
``pygments`` and ``markdown-it-py``), and neither the runtime nor the function's asset ever imports
it, so the Lambda side does not pay for it; lazy imports with a plain-text fallback would give every
table two renderings to keep in step.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator, Sequence
from typing import IO, Any, Final, TextIO, cast

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from constructs_fifo.demo.scenarios.divergence import DivergenceResult
from constructs_fifo.demo.scenarios.events_run import EventsResult
from constructs_fifo.demo.scenarios.pipeline import DemoResult
from constructs_fifo.stacks.describe import StackDescription

__all__ = [
    "UNWRAPPED_WIDTH",
    "DrainProgress",
    "console",
    "description_lines",
    "drain_progress",
    "print_demo",
    "print_divergence",
    "print_lines",
    "print_status",
    "print_table",
    "serve_exports",
]

#: The width of a console that is not a terminal: wider than any line the CLI prints (an ARN is at most
#: 2,048 characters), so nothing is wrapped.
UNWRAPPED_WIDTH: Final = 10_000


class _Unpadded(io.TextIOBase):
    """A stream that drops the trailing spaces of each line (rich pads ``log`` lines to the width)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write("\n".join(line.rstrip(" ") for line in text.split("\n")))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False


def console(*, stderr: bool = False) -> Console:
    """A console without syntax highlighting (stderr for progress when stdout carries data).

    Its ``log`` lines carry the time but not the source location (``steps.py:246``): on an 80-column
    terminal that column took about 24 columns from every line, for something only a developer reads.
    Not on a terminal, it never wraps (see the module docstring).
    """
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr, highlight=False, log_path=False)
    return Console(
        file=cast("IO[str]", _Unpadded(stream)),
        width=UNWRAPPED_WIDTH,
        soft_wrap=True,
        highlight=False,
        log_path=False,
    )


def print_table(out: Console, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A table whose cells are never cut or folded: as a table when it fits ``out``'s width, else
    one block of ``column: value`` lines per row (each line whole; a terminal wraps it visually)."""
    table = Table(title=title)
    for column in columns:
        table.add_column(column, no_wrap=True)
    for row in rows:
        table.add_row(*row)
    # measured without the console's bound (within it, the measure is clamped to the width)
    if out.measure(table, options=out.options.update(width=UNWRAPPED_WIDTH)).maximum <= out.width:
        out.print(table)
        return
    out.print(title, soft_wrap=True, markup=False)
    for row in rows:
        for column, value in zip(columns, row, strict=True):
            out.print(f"  {column}: {value}", soft_wrap=True, markup=False)


def print_lines(lines: Sequence[str], stream: TextIO | None = None) -> None:
    """Plain lines to stdout (or ``stream``), never wrapped, flushed (a pasted value must be whole)."""
    out = sys.stdout if stream is None else stream
    for line in lines:
        print(line, file=out)
    out.flush()


def description_lines(described: StackDescription) -> list[str]:
    """``describe``'s text form: per queue a heading and one ``label  value`` line per resource."""
    lines: list[str] = []
    for queue in described.queues:
        lines.append(f"{queue.queue.label} (stack {described.stack})")
        rows = queue.rows()
        width = max(len(label) for label, _ in rows)
        lines.extend(f"  {label:<{width}}  {value}" for label, value in rows)
    if described.outputs:
        lines.append(f"outputs of stack {described.stack}")
        width = max(len(key) for key in described.outputs)
        lines.extend(f"  {key:<{width}}  {value}" for key, value in sorted(described.outputs.items()))
    return lines


def serve_exports(endpoint_url: str, region: str) -> list[str]:
    """What a shell needs to point boto3, the AWS CLI, the CDK and ``constructs-fifo`` at the emulator.

    Both region variables: boto3 reads only ``AWS_DEFAULT_REGION``, ``constructs-fifo`` and the CDK
    read ``AWS_REGION`` first, and one set alone would let them disagree.
    """
    return [
        "# point tools at the emulator (paste into another shell):",
        f"export AWS_ENDPOINT_URL={endpoint_url} AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing "
        f"AWS_REGION={region} AWS_DEFAULT_REGION={region}",
    ]


class DrainProgress:
    """Progress bars, one per queue drained, each appearing (and starting its clock) when first reported.

    Call it with ``(queue label, done, total)``: a
    :data:`~constructs_fifo.demo.steps.ProgressCallback`. A queue drained again (after a resume)
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
    if "builds" in counts:  # the long jobs on local container workers
        rows[-1:-1] = [
            (
                "long builds (3 x visibility) succeeded once",
                f"{counts['builds_succeeded']} of {counts['builds']}",
            ),
            ("builds run again after SIGKILL (attempt 2)", str(counts["builds_retried_after_sigkill"])),
            ("builds finished by the SIGTERM-stopped worker", str(counts["builds_finished_after_sigterm"])),
        ]
    rows.extend((f"time: {phase}", f"{seconds:.1f} s") for phase, seconds in result.timings.seconds.items())
    rows.append(("elapsed", f"{sum(result.timings.seconds.values()):.1f} s"))
    print_table(out, "constructs-fifo demo", ("measure", "value"), rows)
    for violation in result.violations:
        out.print(f"[red]violation[/red] {violation.kind}: {violation.message}", markup=True)
    if result.passed:
        out.print(
            "[green]verified[/green]: each workspace applied its jobs once and in order, every notification "
            "recorded once, only the poison jobs in the DLQ, no group parked, queues empty"
        )
        if "builds" in result.counts:
            out.print(
                "[green]verified[/green]: every long build (3 x its visibility timeout) finished once on the "
                "local workers, through a SIGKILL (run again, one more attempt) and a SIGTERM (nothing lost, "
                "nothing run twice)"
            )
    print_status(out, result.status)


def print_status(out: Console, statuses: list[dict[str, Any]]) -> None:
    """``constructs-fifo status`` of the demo's queues, as it left them (its ``--json`` documents)."""
    if not statuses:
        return
    columns = ("queue", "mode", "visible / in flight", "DLQ", "parked", "gaps", "expired claims", "alarms")
    rows = [
        (
            str(status["queue"]),
            str(status["mode"]),
            f"{status['visible']} / {status['inFlight']}",
            str(status["deadLetterQueueDepth"]),
            ", ".join(status["parkedGroups"]) or "none",
            ", ".join(status["openSequenceGaps"]) or "none",
            ", ".join(status["expiredInFlightClaims"]) or "none",
            ", ".join(status["alarmsInAlarm"]) or "none",
        )
        for status in statuses
    ]
    print_table(out, "constructs-fifo status", columns, rows)


def print_divergence(out: Console, result: DivergenceResult) -> None:
    """The three workspaces side by side, and the verdict."""
    # Its cells are job types and values, wrapped at spaces; a side-by-side view is the point of it.
    table = Table(title="Same events, three producers (FIFO delivered each as sent)")
    table.add_column("")
    for outcome in result.outcomes:
        table.add_column(outcome.title)
    for label, *values in result.rows():
        table.add_row(label, *values)
    out.print(table)
    out.print(result.verdict())


def print_events(out: Console, result: EventsResult) -> None:
    """Each account side by side (in order, with seq as deployed, without seq), violations, the verdict."""
    table = Table(title="Same account events, shuffled on the bus (versions in publish order)")
    for column in ("account", "published", "in order", "with seq (deployed)", "without seq"):
        table.add_column(column)
    differing = set(result.without_seq.differing)
    for account, published, in_order, with_seq, without in result.rows():
        marker = " *" if account in differing else ""
        table.add_row(account, published, in_order, with_seq, f"{without}{marker}")
    out.print(table)
    timings = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in result.timings.seconds.items())
    out.print(f"time: {timings}")
    for violation in result.violations:
        out.print(f"[red]violation[/red]: {violation}")
    out.print(result.verdict())
