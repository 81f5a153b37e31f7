"""The charts: figures 1-3, one panel per figure, one bar per consumer and pass; figure 9, write units
per job against state size, first delivery and redelivered (matplotlib, PNG)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.consumers import BASELINE, CONSUMERS
from benchmarks.cost_per_job import FILLS, REDELIVERED, delivery_case
from benchmarks.passes import PASSES
from benchmarks.results import FIGURES, Results

__all__ = ["draw", "draw_capacity"]


def _values(results: Results, figure: int) -> dict[str, dict[str, float | None]]:
    """``{consumer: {pass: value}}`` of one figure's first measure (the one its panel is titled by; figure
    2's second, without botocore, stays in the table); the baseline's from any row's baseline value."""
    values: dict[str, dict[str, float | None]] = {name: dict.fromkeys(PASSES) for name in CONSUMERS}
    rows = results.figure(figure)
    for row in rows:
        if row.measure == rows[0].measure and row.subject in values and row.case in PASSES:
            values[row.subject][row.case] = row.value
            values[BASELINE][row.case] = row.baseline_value
    return values


def draw(results: Results, path: Path) -> Path:
    """Draw figures 1-3 of ``results`` into ``path`` (a small PNG) and return it."""
    import matplotlib  # noqa: PLC0415 - only the chart needs it

    matplotlib.use("Agg")
    from matplotlib import pyplot  # noqa: PLC0415

    names = list(CONSUMERS)
    colours = {PASSES[0]: "#1f77b4", PASSES[1]: "#aec7e8"}
    figure, axes = pyplot.subplots(1, 3, figsize=(11, 3.4), dpi=90)
    for axis, number in zip(axes, (1, 2, 3), strict=True):
        values = _values(results, number)
        rows = results.figure(number)
        width = 0.38
        labelled: set[str] = set()  # the legend names each case once, at its first drawn bar
        for offset, case in ((-width / 2, PASSES[0]), (width / 2, PASSES[1])):
            for index, name in enumerate(names):
                value = values[name][case]
                x = index + offset
                if value is None:
                    axis.text(x, 0, "n/a", ha="center", va="bottom", fontsize=7)
                    continue
                axis.bar(x, value, width, color=colours[case], label=None if case in labelled else case)
                labelled.add(case)
                axis.text(x, value, f"{value:,.{rows[0].digits if rows else 0}f}", ha="center", va="bottom",
                          fontsize=7)  # fmt: skip
        axis.set_xticks(range(len(names)), names)
        title = rows[0].measure if rows else FIGURES[number]
        axis.set_title(f"{number}. {title}", fontsize=8)
        axis.set_ylabel(rows[0].unit if rows else "", fontsize=8)
        axis.tick_params(labelsize=8)
        axis.margins(y=0.15)
    if axes[0].get_legend_handles_labels()[0]:  # a run without any figure-1 value has nothing to name
        axes[0].legend(fontsize=7, loc="upper center")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    pyplot.close(figure)
    return path


def _state_kb(subject: str) -> float | None:
    """``"state 10 KB"`` -> 10.0 (figure 9's state subjects), else ``None``."""
    parts = subject.split()
    if len(parts) == 3 and parts[0] == "state" and parts[2] == "KB":
        return float(parts[1])
    return None


def draw_capacity(results: Results, path: Path) -> Path | None:
    """Figure 9's write units per job against state size: one line per batch fill (first delivery solid,
    redelivered dotted), claim mode's first delivery flat.

    Returns ``None`` (and draws nothing) when figure 9 has no state values.
    """
    rows = [
        r for r in results.figure(9) if r.measure.startswith("DynamoDB write units") and r.value is not None
    ]
    redelivered = {delivery_case(fill, REDELIVERED): fill for fill in FILLS}
    lines: dict[str, list[tuple[float, float]]] = {}
    again: dict[str, list[tuple[float, float]]] = {}
    claim: dict[str, float] = {}
    for row in rows:
        kb = _state_kb(row.subject)
        if row.value is None or (row.case not in FILLS and row.case not in redelivered):
            continue
        if kb is not None and row.case in redelivered:
            again.setdefault(redelivered[row.case], []).append((kb, row.value))
        elif kb is not None:
            lines.setdefault(row.case, []).append((kb, row.value))
        elif row.subject == "claim" and row.case in FILLS:
            claim[row.case] = row.value
    if not lines:
        return None
    import matplotlib  # noqa: PLC0415 - only the chart needs it

    matplotlib.use("Agg")
    from matplotlib import pyplot  # noqa: PLC0415

    figure, axis = pyplot.subplots(figsize=(6.4, 3.6), dpi=90)
    colours = ["#1f77b4", "#ff7f0e"]
    same = len(set(claim.values())) == 1  # claim mode costs the same at both fills: one line
    for colour, (fill, points) in zip(colours, sorted(lines.items()), strict=False):
        points.sort()
        axis.plot([kb for kb, _ in points], [units for _, units in points], marker="o", color=colour,
                  label=f"state mode, {fill}")  # fmt: skip
        if fill in again:
            marked = sorted(again[fill])
            axis.plot([kb for kb, _ in marked], [units for _, units in marked], marker=".", color=colour,
                      linestyle=":", label=f"state mode, {fill}, redelivered")  # fmt: skip
        if fill in claim and not same:
            axis.axhline(claim[fill], color=colour, linestyle="--", linewidth=1,
                         label=f"claim mode, {fill} ({claim[fill]:g})")  # fmt: skip
    if same:
        (units,) = set(claim.values())
        axis.axhline(
            units, color="grey", linestyle="--", linewidth=1.2, label=f"claim mode, both fills ({units:g})"
        )
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("state size (KB of JSON)", fontsize=8)
    axis.set_ylabel("DynamoDB write units per job", fontsize=8)
    axis.set_title("9. write units per job against state size", fontsize=9)
    axis.tick_params(labelsize=8)
    axis.legend(fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    pyplot.close(figure)
    return path
