"""``python -m benchmarks`` (``make bench``): one run of every figure, printed and written.

Prints the table (or, with ``--json``, the same figures as JSON) on stdout, progress on stderr, and
writes ``BENCHMARKS.md`` and the chart of figures 1-3 (``benchmarks.png``) into ``--out``.

Exit status: non-zero when the run is not to be trusted: a consumer failed a record or ran a job the
wrong number of times, the claim mode broke its DynamoDB call budget (2 per new job, 1 per duplicate),
or the in-memory responder's call counts disagree with moto's. A target that is not met is reported,
not an error.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
from pathlib import Path

from benchmarks.consumers import CONSUMERS
from benchmarks.cost_markdown import CAPACITY_CHART_NAME
from benchmarks.figures import Settings, run
from benchmarks.in_memory import run_in_memory
from benchmarks.markdown import CHART_NAME, HEADER, render, table_rows
from benchmarks.results import FIGURES, Results
from benchmarks.workload import workload

__all__ = ["main", "print_table"]

DEFAULT_OUT = Path("reports") / "bench"


def _parser() -> argparse.ArgumentParser:
    defaults = Settings()
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    add = parser.add_argument
    add("--jobs", type=int, default=defaults.jobs, help="new jobs per pass (default %(default)s)")
    add("--groups", type=int, default=defaults.groups, help="message groups (default %(default)s)")
    add("--batch-size", type=int, default=defaults.batch_size, help="records per batch (default %(default)s)")
    add(
        "--ddb-delay-ms",
        type=float,
        default=defaults.ddb_delay_ms,
        help="figure 3: delay per DynamoDB call in ms (default %(default)s)",
    )
    add(
        "--sqs-delay-ms",
        type=float,
        default=defaults.sqs_delay_ms,
        help="figure 6: delay per SQS call in ms (default %(default)s)",
    )
    add("--cpu-repeats", type=int, default=defaults.cpu_repeats, help="figure 2 runs (median; %(default)s)")
    add(
        "--cold-start-runs",
        type=int,
        default=defaults.cold_start_runs,
        help="figure 5: fresh interpreters per import timing; 0 skips it (default %(default)s)",
    )
    add(
        "--synth-runs",
        type=int,
        default=defaults.synth_runs,
        help="figure 7: timed synths per side; 0 skips it (default %(default)s)",
    )
    add(
        "--local-jobs",
        type=int,
        default=defaults.local_jobs,
        help="figure 8: jobs per group count through emulator and drain; 0 skips it (default %(default)s)",
    )
    add(
        "--local-concurrency",
        type=int,
        default=defaults.local_concurrency,
        help="figure 8: batches in flight at once (default: the deployed concurrency, 10)",
    )
    add(
        "--producer-repeats",
        type=int,
        default=defaults.producer_repeats,
        help="figure 6 runs on moto (median; default %(default)s)",
    )
    add(
        "--cost-jobs",
        type=int,
        default=defaults.cost_jobs,
        help="figure 9: measured new jobs per case; 0 skips it (default %(default)s)",
    )
    add(
        "--cost-warmup",
        type=int,
        default=defaults.cost_warmup,
        help="figure 9: unmeasured jobs per group before the measured ones (default %(default)s)",
    )
    add(
        "--no-controls",
        action="store_true",
        help="figure 9: leave out what the controls cost (cancel, hold + release, supersede, run first,"
        " pace)",
    )
    add(
        "--worker-jobs",
        type=int,
        default=defaults.worker_jobs,
        help="figure 11: jobs per slot count of one worker's run; 0 skips those runs (default %(default)s)",
    )
    add(
        "--only",
        type=int,
        nargs="+",
        choices=sorted(FIGURES),
        default=[],
        metavar="FIGURE",
        help="run only these figures (1-4 run together), e.g. --only 8 for the local pipeline, --only 9 "
        "for what a job costs, --only 11 for container workers",
    )
    add("--json", action="store_true", help="print the figures as JSON instead of the table")
    add(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="where BENCHMARKS.md and the chart are written (default %(default)s; '.' refreshes the "
        "committed ones)",
    )
    add("--profile", action="store_true", help="also profile the claim mode's new-jobs pass (cProfile)")
    return parser


def print_table(results: Results) -> None:
    """Print every row as an aligned text table."""
    cells = [HEADER, *table_rows(results)]
    widths = [max(len(row[column]) for row in cells) for column in range(len(HEADER))]
    numeric = {4, 7, 8}
    for row in cells:
        print(
            "  ".join(
                cell.rjust(width) if index in numeric else cell.ljust(width)
                for index, (cell, width) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )


def _profile(settings: Settings) -> None:
    """Where the claim mode's CPU goes, against the instant responder."""
    profiler = cProfile.Profile()
    profiler.enable()
    run_in_memory(CONSUMERS["claim"], workload(settings.jobs, settings.groups, settings.batch_size))
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in stats.values())
    ours = {key: entry for key, entry in stats.items() if f"{os.sep}constructs_fifo{os.sep}" in key[0]}
    own = sum(entry[2] for entry in ours.values())
    print(f"\nprofile of the claim mode (cProfile): {total:.2f} s, {own / total:.1%} in constructs_fifo")
    for key, entry in sorted(ours.items(), key=lambda item: -item[1][2])[:10]:
        path = key[0].split(f"constructs_fifo{os.sep}", 1)[-1]
        where = f"{path}:{key[1]} {key[2]}"
        print(f"  {entry[2] * 1000:8.1f} ms own {entry[3]:7.2f} s cum {entry[1]:>6} calls  {where}")


def main(argv: list[str] | None = None) -> int:
    """Run, print, write; see the module docstring for the exit status."""
    args = _parser().parse_args(argv)
    settings = Settings(
        jobs=args.jobs,
        groups=args.groups,
        batch_size=args.batch_size,
        ddb_delay_ms=args.ddb_delay_ms,
        sqs_delay_ms=args.sqs_delay_ms,
        cpu_repeats=args.cpu_repeats,
        cold_start_runs=args.cold_start_runs,
        synth_runs=args.synth_runs,
        local_jobs=args.local_jobs,
        local_concurrency=args.local_concurrency,
        producer_repeats=args.producer_repeats,
        cost_jobs=args.cost_jobs,
        cost_warmup=args.cost_warmup,
        worker_jobs=args.worker_jobs,
        controls=not args.no_controls,
        only=tuple(args.only),
    )
    command = " ".join(["python -m benchmarks", *(argv if argv is not None else sys.argv[1:])])
    results = run(settings, command)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "BENCHMARKS.md").write_text(render(results), encoding="utf-8")
    try:
        from benchmarks.chart import draw, draw_capacity  # noqa: PLC0415

        chart = str(draw(results, out / CHART_NAME))
        capacity = draw_capacity(results, out / CAPACITY_CHART_NAME)
        if capacity is not None:
            chart += f", {capacity}"
    except ImportError as exc:  # matplotlib is in the bench extra; the figures do not need it
        chart = f"not drawn ({exc}; install the bench extra)"
    if args.json:
        print(json.dumps(results.as_json(), indent=2))
    else:
        print_table(results)
        print(f"\nwrote {out / 'BENCHMARKS.md'}; chart: {chart}; {results.wall_seconds:.0f} s")
        for note in results.notes:
            print(f"not measured: {note}")
        for problem in results.problems:
            print(f"PROBLEM: {problem}")
    if args.profile:
        _profile(settings)
    return 1 if results.problems else 0
