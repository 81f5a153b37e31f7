"""Figure 9 in BENCHMARKS.md: one line per case with every cost, the crossover, the goal, the prices used."""

from __future__ import annotations

from benchmarks.cost_per_job import FILLS, LATENCY_MS_PER_CALL, PLATFORM_LOG_BYTES_PER_INVOCATION
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
    ("log bytes per job", "log B/job"),
    ("dollars per million jobs", "$/M jobs"),
)

MODELS = f"""\
- **Capacity units** are computed by DynamoDB's published rules from the items before and after each
  call (`benchmarks/capacity.py`), by the in-memory responder that answers the consumer's own boto3
  calls: moto 5.2.5 returns fixed `ConsumedCapacity` values whatever the item's size (1 per write, 0.5
  per GetItem, 1 per BatchGetItem key); where those are right (small items), the two agree
  (`tests/functional/test_benchmarks_capacity.py`).
- **SQS requests**: the producer's SendMessageBatch of 10, the mapping's one ReceiveMessage and one
  DeleteMessageBatch per batch (as Lambda's poller does; empty receives of an idle queue are not per
  job), and every SQS call of the runtime itself, counted; each 64 KB of a payload is one request.
- **Lambda**: one request per batch; billed duration = the batch's measured CPU scaled to the function's
  share of a vCPU (one vCPU at 1,769 MB) + {LATENCY_MS_PER_CALL:g} ms per DynamoDB or SQS call, at the
  construct's default memory. CPU is this machine's: read the column as an estimate.
- **Logs**: the bytes the runtime's logger wrote (Powertools logs nothing by default), plus
  {PLATFORM_LOG_BYTES_PER_INVOCATION} B of Lambda's START/END/REPORT lines per invocation in the dollars.
- **Cases**: 10 groups, batches of 10 records; *one job per group* (each batch holds one job of each of
  10 groups: low traffic) or *ten jobs per group* (one busy group per batch); new jobs without `seq`,
  after enough unmeasured jobs per group that state mode's bookkeeping is in its steady state; the
  state cases pad the state's JSON to the size named.
"""


def _by_case(rows: list[Row]) -> dict[tuple[str, str], dict[str, Row]]:
    table: dict[tuple[str, str], dict[str, Row]] = {}
    for row in rows:
        for prefix, _label in _COLUMNS:
            if row.measure.startswith(prefix):
                table.setdefault((row.subject, row.case), {})[prefix] = row
    return table


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
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
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
    lines += [
        "",
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
