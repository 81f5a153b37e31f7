"""The benchmark report: throughput and call budget of ours vs the Powertools baseline, and cold start.

Exit status: non-zero when our runtime failed a record, ran a job the wrong number of times or broke
its DynamoDB call budget (2 per new job, 1 per duplicate). The baseline's figures are reported, not
judged.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats

from benchmarks.cold_start import OURS_IMPORT, ImportTiming, import_seconds
from benchmarks.powertools_baseline import INSTALL_HINT, POWERTOOLS_IMPORT, available, run_powertools
from benchmarks.runtime_throughput import BUDGET, PassResult, Workload, run_ours, workload

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--jobs", type=int, default=1000, help="new jobs per pass (default 1000)")
    parser.add_argument("--groups", type=int, default=50, help="message groups (default 50)")
    parser.add_argument("--batch-size", type=int, default=10, help="records per batch (default 10)")
    parser.add_argument(
        "--runs", type=int, default=5, help="fresh interpreters per import timing (default 5)"
    )
    parser.add_argument("--no-cold-start", action="store_true", help="skip the import-time measurement")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also profile our new-jobs pass once (cProfile) and print our share",
    )
    return parser


def _table(results: list[PassResult]) -> None:
    print(
        f"{'system':<16} {'pass':<11} {'records':>7} {'seconds':>8} {'records/s':>10} "
        f"{'DDB calls/record':>17} {'failed':>7} {'ran':>6}"
    )
    for r in results:
        print(
            f"{r.system:<16} {r.name:<11} {r.records:>7} {r.seconds:>8.2f} {r.records_per_second:>10.0f} "
            f"{r.calls_per_record:>17.2f} {r.failures:>7} {r.executed:>6}"
        )


def _ratios(ours: list[PassResult], baseline: list[PassResult]) -> None:
    for mine, theirs in zip(ours, baseline, strict=True):
        print(
            f"  {mine.name}: constructs-fifo / powertools throughput = "
            f"{mine.records_per_second / theirs.records_per_second:.2f}x"
        )


def _cold_start(runs: int, with_baseline: bool) -> None:
    cases = [
        ("boto3 alone", "import boto3"),
        ("constructs-fifo entrypoint", OURS_IMPORT),
        ("constructs-fifo entrypoint + boto3", f"{OURS_IMPORT}; import boto3"),
    ]
    if with_baseline:
        cases += [
            ("powertools batch + idempotency", POWERTOOLS_IMPORT),
            ("powertools batch + idempotency + boto3", f"{POWERTOOLS_IMPORT}; import boto3"),
        ]
    for bytecode, mode in ((True, "cached .pyc"), (False, "compiled from source, no .pyc")):
        print(
            f"\ncold-start import time, {mode} (median of {runs} fresh interpreters, import statement only)"
        )
        for label, statement in cases:
            timing: ImportTiming = import_seconds(label, statement, runs=runs, bytecode=bytecode)
            spread = f"{min(timing.seconds) * 1000:.0f}-{max(timing.seconds) * 1000:.0f}"
            print(f"  {timing.label:<42} {timing.median_ms:>7.1f} ms   (range {spread} ms)")


def _profile(work: Workload) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    run_ours(work)
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in stats.values())
    ours = {key: entry for key, entry in stats.items() if f"{os.sep}constructs_fifo{os.sep}" in key[0]}
    own = sum(entry[2] for entry in ours.values())
    print(
        f"\nprofile of our run (cProfile): {total:.2f} s in all, "
        f"{own:.3f} s ({own / total:.1%}) in constructs_fifo itself"
    )
    print("  top functions of ours by own time:")
    for key, entry in sorted(ours.items(), key=lambda item: -item[1][2])[:8]:
        path = key[0].split(f"constructs_fifo{os.sep}", 1)[-1]
        print(
            f"    {entry[2] * 1000:8.1f} ms own {entry[3]:8.2f} s cum {entry[1]:>6} calls  "
            f"{path}:{key[1]} {key[2]}"
        )


def main(argv: list[str] | None = None) -> int:
    """Print the report; see the module docstring for the exit status."""
    args = _parser().parse_args(argv)
    work = workload(args.jobs, args.groups, args.batch_size)
    print(
        f"moto in-process: {args.jobs:,} jobs over {args.groups} groups in batches of {args.batch_size}, "
        "then the same jobIds again in new messages (duplicates); the job function does nothing"
    )
    ours = run_ours(work)
    version = available()
    baseline = run_powertools(work) if version else []
    _table(ours + baseline)
    if version:
        print(
            f"baseline: aws-lambda-powertools {version}, SqsFifoPartialProcessor(skip_group_on_error=True) +"
        )
        print("  idempotent_function(DynamoDBPersistenceLayer), same records, same moto, same process")
        _ratios(ours, baseline)
    else:
        print(f"baseline skipped: aws-lambda-powertools is not importable; {INSTALL_HINT}")
    if not args.no_cold_start:
        _cold_start(args.runs, with_baseline=version is not None)
    if args.profile:
        _profile(work)
    expected_runs = {"new jobs": len(work.new), "duplicates": 0}
    broken = [
        r
        for r in ours
        if r.failures or r.calls_per_record != BUDGET[r.name] or r.executed != expected_runs[r.name]
    ]
    for r in broken:
        print(
            f"BUDGET BROKEN: {r.name}: {r.calls_per_record:.2f} DynamoDB calls/record "
            f"(budget {BUDGET[r.name]:.0f}), "
            f"{r.failures} failed, ran {r.executed} (expected {expected_runs[r.name]})"
        )
    return 1 if broken else 0
