"""Figure 9 in BENCHMARKS.md: one line per case with every cost, the crossover, the goal, the prices used;
then a second table of the units, requests and dollars of a redelivery and of duplicates, by case; then
what the controls cost (:mod:`benchmarks.control_rows`), one line per control and case."""

from __future__ import annotations

from benchmarks.control_rows import CONTROL_MEASURES
from benchmarks.cost_per_job import (
    DELIVERIES,
    FILLS,
    FIRST_DELIVERY,
    LATENCY_MS_PER_CALL,
    PLATFORM_LOG_BYTES_PER_INVOCATION,
    REDELIVERED,
    delivery_case,
)
from benchmarks.prices import PRICES
from benchmarks.results import Results, Row

__all__ = ["CAPACITY_CHART_NAME", "cost_section"]

#: The chart of write units per job against state size, written next to the markdown.
CAPACITY_CHART_NAME = "capacity.png"

_COLUMNS = (
    ("DynamoDB write units per job", "WCU/job"),
    ("DynamoDB read units per job", "RCU/job"),
    ("SQS requests per job", "SQS req/job"),
    ("Lambda GB-seconds per job", "GB-s/job"),
    ("log bytes per job (", "log B/job"),
    ("log bytes per job at outcome_lines=BATCH", "log B/job at BATCH"),
    ("dollars per million jobs", "$/M jobs"),
)

MODELS = f"""\
- **Capacity units** are computed by DynamoDB's published rules from the items before and after each
  call (`benchmarks/capacity.py`), by the in-memory responder that answers the consumer's own boto3
  calls: moto 5.2.5 returns fixed `ConsumedCapacity` values whatever the item's size (1 per write, 0.5
  per GetItem, 1 per BatchGetItem key); where those are right (small items), the two agree
  (`tests/functional/test_benchmarks_capacity.py`).
- **SQS requests**: *modelled* (Lambda's poller and the producer make them, not code this run
  executes): the producer's SendMessageBatch of 10 (first delivery only: a redelivered or duplicate
  record is the same message received again), the mapping's one ReceiveMessage and one
  DeleteMessageBatch per batch (empty receives of an idle queue are not per job). *Counted*: every SQS
  call the runtime makes itself (ChangeMessageVisibility(Batch) for retries, SendMessage(Batch) to the
  dead-letter queue and of wake-up messages), answered and counted by the in-memory responder; the
  `--json` output's SQS rows split the three. Each 64 KB of a payload is one request.
- **Lambda**: one request per batch; billed duration = the batch's measured CPU scaled to the function's
  share of a vCPU (one vCPU at 1,769 MB) + {LATENCY_MS_PER_CALL:g} ms per DynamoDB or SQS call, at the
  construct's default memory. CPU is this machine's: read the column as an estimate.
- **Logs**: the bytes the runtime's logger wrote (Powertools logs nothing by default), plus
  {PLATFORM_LOG_BYTES_PER_INVOCATION} B of Lambda's START/END/REPORT lines per invocation in the dollars
  (at the default `outcome_lines=JOB`); *log B/job at BATCH* counts the same calls given to a logger at
  `outcome_lines=BATCH` (successes summarized once per batch), in the same run.
- **Cases**: 10 groups, batches of 10 records; *one job per group* (each batch holds one job of each of
  10 groups: low traffic) or *ten jobs per group* (one busy group per batch); new jobs without `seq`,
  after enough unmeasured jobs per group that state mode's bookkeeping is in its steady state; the
  state cases pad the state's JSON to the size named. Each case is measured three times on the same
  tables: the *first delivery* (the table above), the same records again after they were committed
  (*duplicates*), and as many other new jobs, never run, received a second time (*redelivered*).
"""

REDELIVERIES = """- **redelivered**: new jobs that never ran, every record received a second time
  (`ApproximateReceiveCount` 2), as after an invocation that crashed or timed out before reaching
  them. Claim mode and Powertools do not look at the receive count: they pay a first delivery's
  units. State mode watches a redelivered group for crashes (`runtime/state/crash_watch.py`): the
  batch's one read also asks for the group's run item (one read unit more per group, found or not),
  and a run marker is written to it before the group's first transition (one write unit per group,
  whatever the state's size), then the group commits as on a first delivery.
- **duplicates**: the same records again after their batch committed (a response lost, or a commit
  that finished after the visibility timeout), received a second time: no job runs. Claim mode and
  Powertools pay one refused conditional write per job (1 unit); state mode finds every job in the
  state it reads and writes nothing (its read, with the run item, is the whole cost).
- Neither row counts the delivery before it (its receive, its Lambda time), and the SQS column has no
  producer send: the messages were sent once.
- **The job whose own run crashed** is not in these rows. In claim mode its claim is still `IN_FLIGHT`
  when its lease expires: the retry pays a refused claim, a retake and the completion, 3 write units
  (`runtime/claim/store.py`, rules 2 and 3). In state mode a marker found at the read isolates the
  group: its next run marks every transition before calling it, one write unit each, until a run
  commits.
"""


def _table_head(header: list[str]) -> list[str]:
    """A markdown table's header and separator lines."""
    return ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]


def _by_case(rows: list[Row]) -> dict[tuple[str, str], dict[str, Row]]:
    table: dict[tuple[str, str], dict[str, Row]] = {}
    for row in rows:
        for prefix, _label in _COLUMNS:
            if row.measure.startswith(prefix):
                table.setdefault((row.subject, row.case), {})[prefix] = row
    return table


def _slash(cells: dict[str, Row], deliveries: tuple[str, ...]) -> str:
    """``"2.00 / 3.00 / 0.00"``: one measure's values for ``deliveries``, in that order."""
    return " / ".join(cells[delivery].shown_value if delivery in cells else "" for delivery in deliveries)


def _redelivery_lines(rows: list[Row]) -> list[str]:
    """Figure 9's second table (units and dollars by delivery) and what a run marker costs."""
    measures = [prefix for prefix, _label in _COLUMNS]
    wanted = {measures[0]: "WCU/job", measures[1]: "RCU/job", measures[2]: "SQS req/job"}
    wanted[measures[-1]] = "$/M jobs"
    by: dict[tuple[str, str], dict[str, dict[str, Row]]] = {}
    for row in rows:
        prefix = next((prefix for prefix in wanted if row.measure.startswith(prefix)), None)
        for fill in FILLS:
            for delivery in DELIVERIES:
                if prefix is not None and row.case == delivery_case(fill, delivery):
                    by.setdefault((row.subject, fill), {}).setdefault(prefix, {})[delivery] = row
    if not any(REDELIVERED in cells for measures_ in by.values() for cells in measures_.values()):
        return []
    shown = " / ".join(DELIVERIES)
    header = ["subject", "batch fill", *[f"{label}: {shown}" for label in wanted.values()]]
    lines = [
        "### Redeliveries and duplicates",
        "",
        *_table_head(header),
    ]
    for (subject, fill), cells in by.items():
        values = [_slash(cells.get(prefix, {}), DELIVERIES) for prefix in wanted]
        lines.append("| " + " | ".join([subject, fill, *values]) + " |")
    lines += ["", REDELIVERIES]
    markers = []
    for (subject, fill), cells in by.items():
        units = cells.get(measures[0], {})
        first, again = units.get(FIRST_DELIVERY), units.get(REDELIVERED)
        if fill != FILLS[0] or not subject.startswith("state ") or first is None or again is None:
            continue
        if first.value is None or again.value is None:
            continue
        markers.append(
            f"{subject}: {again.value:.2f} = the commit's {first.value:.2f} + {again.value - first.value:.2f}"
            f" for the marker ({2 * first.value:.2f} when the marker rewrote the state item)"
        )
    if markers:
        lines += [
            "**What a run marker costs.** Before the marker moved to the run item (commit e329b2c), a "
            "redelivered group wrote it into the state item: a second rewrite of the whole state, as "
            "many write units as the commit. Now it is one unit per group and batch whatever the "
            "state's size. Write units per job redelivered, one job per group: " + "; ".join(markers) + ".",
            "",
        ]
    return lines


CONTROLS = """- Each case is one group of 10 jobs (one batch of 10) on a queue of its own, played end to end:
  the producer's send, the control (`JobSteering`), and the runtime (`build_processor`) given the source
  queue's records in Lambda's FIFO batches until the queue is empty; the hold's second case keeps 1 job,
  where no batch read is shared. Values are per job the control touches (per kept job for a hold), beside
  the same consumer's *uncontrolled* jobs (sent and run) measured the same way, which keep figure 1's
  budget: a queue that never steers pays nothing for the controls.
- *Calls* are counted by operation and must be moto's, call for call (the same play runs on moto in
  process); *units* are the in-memory responder's, by DynamoDB's rules, as in the rows above. *SQS* counts
  what the producer, the control and the runtime send (`send_superseding` sends each job alone; a release
  sends the group's wake-up message); the mapping's receives and deletes are per batch and not counted.
- **A cancel** (claim mode): before the job starts, the cancel's `PutItem` and the runtime's refused claim
  are the job's two writes: it costs what a job that runs costs, and its function never runs. While it
  runs, the cancel finds the claim (a refused `PutItem`, then its `UpdateItem`), and the runtime's
  refused completion reads the claim once. State mode: a `GetItem` and an `UpdateItem` of the state item
  per cancel, then its place closed in the group's commit.
"""


def _control_lines(rows: list[Row]) -> list[str]:
    """What the controls cost: one line per control, case and consumer, every measure with its baseline."""
    by: dict[tuple[str, str], dict[str, Row]] = {}
    for row in rows:
        for measure, _unit, _pick in CONTROL_MEASURES:
            if row.measure == measure:
                by.setdefault((row.case, row.subject), {})[measure] = row
    if not by:
        return []
    units = ("calls/job", "RCU/job", "WCU/job", "SQS req/job")  # CONTROL_MEASURES' units, as shown
    header = ["control", "consumer", "per", *[f"{unit} (uncontrolled)" for unit in units], "calls"]
    lines = [
        "### What the controls cost",
        "",
        *_table_head(header),
    ]
    for (case, subject), cells in by.items():
        first = cells[CONTROL_MEASURES[0][0]]
        per, _, calls = first.note.partition("; ")
        values = []
        for measure, _unit, _pick in CONTROL_MEASURES:
            cell = cells.get(measure)
            if cell is None:
                values.append("")
                continue
            base = "" if cell.baseline_value is None else f" ({cell.number(cell.baseline_value)})"
            goal = "" if cell.target is None else f", {cell.target.text}: {cell.shown_met}"
            values.append(cell.shown_value + base + goal)
        lines.append("| " + " | ".join([case, subject, per.split(",")[0], *values, calls]) + " |")
    return [*lines, "", CONTROLS]


def _runtime_sqs_line(rows: list[Row]) -> str:
    """What the runtime's own SQS calls were, counted, over every case."""
    called = [
        f"{row.subject} ({row.case}): {row.note.split('(counted: ', 1)[1].rstrip(')')}"
        for row in rows
        if row.unit == "requests/job" and "(counted: " in row.note and not row.measure.startswith("control:")
    ]
    if not called:
        return (
            "- **The runtime's own SQS calls**, counted by the responder: none in any case and delivery "
            "of this run (no job failed, died or parked), so the SQS column is the modelled producer "
            "sends and mapping receives and deletes."
        )
    return "- **The runtime's own SQS calls**, counted by the responder: " + "; ".join(called) + "."


def cost_section(results: Results, chart: str = CAPACITY_CHART_NAME) -> list[str]:
    """The lines of figure 9's section (none when figure 9 was not measured)."""
    rows = [row for row in results.figure(9) if row.value is not None]
    if not rows:
        return []
    header = [
        "subject",
        "batch fill",
        *[label for _prefix, label in _COLUMNS],
        "$ of which",
        "goal (WCU/job)",
    ]
    lines = [
        "## Figure 9: what a job costs",
        "",
        f"![Figure 9: DynamoDB write units per job against state size]({chart})",
        "",
        *_table_head(header),
    ]
    for fill in FILLS:
        for (subject, case), cells in _by_case(rows).items():
            if case != fill:
                continue
            first = cells.get(_COLUMNS[0][0])
            goal = "" if first is None or first.target is None else f"{first.target.text}: {first.shown_met}"
            dollars = cells.get(_COLUMNS[-1][0])
            values = [cells[prefix].shown_value if prefix in cells else "" for prefix, _label in _COLUMNS]
            lines.append(
                "| " + " | ".join([subject, case, *values, dollars.note if dollars else "", goal]) + " |"
            )
    lines.append("")
    for row in results.figure(9):
        if row.subject == "state" and row.unit == "KB":
            value = "n/a" if row.value is None else f"{row.value:,.1f} KB"
            lines.append(f"- **{row.measure}** ({row.case}): {value} ({row.note}).")
    lines += [_runtime_sqs_line(rows), "", *_redelivery_lines(rows), *_control_lines(rows)]
    lines += [
        "Prices (on-demand, no free tier; `benchmarks/prices.py`):",
        "",
        "| price | region | checked | AWS page | confirmed by |",
        "| --- | --- | --- | --- | --- |",
        *[
            f"| {price.name}: {price.text} | {price.region} | {price.checked_on} | {price.source} | "
            f"{price.confirmed} |"
            for price in PRICES
        ],
        "",
        MODELS,
    ]
    return lines
