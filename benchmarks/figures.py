"""One benchmark run: measure every figure and turn the measurements into rows with targets.

Figures 1-4 run every consumer of :data:`benchmarks.consumers.CONSUMERS` on the same workload: on moto
(figure 1's exact call counts, figure 4's speed), against the instant in-memory responder (figure 2,
median of ``cpu_repeats`` runs, each interleaving the consumers batch by batch) and against the
responder with a delay per DynamoDB call (figure 3).
The call counts of the responder runs must equal moto's, a check of the responder's fidelity. Figures 5
to 10 come from their own modules (figure 9, what a job costs: :mod:`benchmarks.cost_per_job`; figure
10, what waiting for an outcome costs: :mod:`benchmarks.outcome_reads`; figure 9's controls:
:mod:`benchmarks.control_costs`; figure 11, container workers:
:mod:`benchmarks.container_workers`). Progress
goes to stderr, so ``--json`` output stays clean.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from benchmarks.cold_start import OURS_IMPORT, import_seconds
from benchmarks.consumers import BASELINE, CONSUMERS, ConsumerSpec
from benchmarks.control_rows import control_rows
from benchmarks.cost_per_job import (
    DELIVERIES,
    FILLS,
    FIRST_DELIVERY,
    LATENCY_MS_PER_CALL,
    JobCost,
    cost_cases,
    crossover_state_bytes,
    delivery_case,
    expected_runs,
    measure_cost,
)
from benchmarks.in_memory import run_in_memory, run_interleaved
from benchmarks.local_pipeline import GROUP_COUNTS, NOT_MEASURED, measure_local_pipeline
from benchmarks.outcome_reads import measure_outcome_reads
from benchmarks.passes import PASSES, PassResult
from benchmarks.powertools_baseline import POWERTOOLS_IMPORT, available
from benchmarks.producer_throughput import measure_on_moto, measure_with_delay
from benchmarks.results import FIGURES, Results, Row, Target, machine
from benchmarks.runtime_throughput import run_on_moto
from benchmarks.synth_time import measure_synth_in_child
from benchmarks.worker_rows import worker_rows
from benchmarks.workload import workload

__all__ = ["Settings", "run"]


@dataclass(frozen=True)
class Settings:
    """The parameters of one run (the command line's options)."""

    jobs: int = 1000
    groups: int = 50
    batch_size: int = 10
    ddb_delay_ms: float = 5.0
    sqs_delay_ms: float = 5.0
    cpu_repeats: int = 5
    cold_start_runs: int = 5  # 0 skips figure 5
    synth_runs: int = 11  # 0 skips figure 7
    local_jobs: int = 240  # jobs per group count of figure 8; 0 skips it
    local_concurrency: int | None = None  # figure 8's batches in flight; None: the deployed concurrency
    producer_repeats: int = 3
    cost_jobs: int = 200  # measured new jobs per case of figure 9; 0 skips it
    cost_warmup: int = 110  # unmeasured jobs per group first (state mode remembers 100 job ids today)
    worker_jobs: int = 320  # jobs per slot count of figure 11; 0 skips its slot runs
    controls: bool = True  # figure 9's controls (cancel, hold + release, supersede, run first, pace)
    only: tuple[int, ...] = ()  # figures to run (1-4 run together); empty runs every figure
    consumers: tuple[str, ...] = field(default_factory=lambda: tuple(CONSUMERS))


@dataclass
class _Measured:
    """Figures 1-4 of one consumer, by pass (``None`` when it could not run)."""

    moto: list[PassResult]
    cpu_us: dict[str, float]
    delayed: list[PassResult]
    #: Figure 2 without botocore (:class:`~benchmarks.direct_client.DirectClient`): the framework alone.
    bare_cpu_us: dict[str, float]


def _progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def _measure_consumers(
    specs: list[ConsumerSpec], settings: Settings, problems: list[str]
) -> dict[str, _Measured]:
    """Figures 1-4 of every consumer. The CPU runs interleave the consumers batch by batch, so that a
    change of load on the machine during the run falls on all of them alike."""
    work = workload(settings.jobs, settings.groups, settings.batch_size)
    moto: dict[str, list[PassResult]] = {}
    for spec in specs:
        _progress(f"{spec.name}: on moto (figures 1 and 4)")
        moto[spec.name] = run_on_moto(spec, work)
    cpu_runs: dict[str, list[list[PassResult]]] = {spec.name: [] for spec in specs}
    bare_runs: dict[str, list[list[PassResult]]] = {spec.name: [] for spec in specs}
    for repeat in range(max(1, settings.cpu_repeats)):
        _progress(f"in-memory responder, run {repeat + 1} of {settings.cpu_repeats} (figure 2)")
        for name, results in run_interleaved(specs, work).items():
            cpu_runs[name].append(results)
        for name, results in run_interleaved(specs, work, botocore=False).items():
            bare_runs[name].append(results)
    delayed: dict[str, list[PassResult]] = {}
    for spec in specs:
        _progress(f"{spec.name}: {settings.ddb_delay_ms:g} ms per DynamoDB call (figure 3)")
        delayed[spec.name] = run_in_memory(spec, work, delay_seconds=settings.ddb_delay_ms / 1000)
    measured = {}
    for spec in specs:
        name = spec.name
        _check(spec, moto[name], [*cpu_runs[name], *bare_runs[name], delayed[name]], problems)
        measured[name] = _Measured(
            moto[name], _median_cpu(cpu_runs[name]), delayed[name], _median_cpu(bare_runs[name])
        )
    return measured


def _median_cpu(runs: list[list[PassResult]]) -> dict[str, float]:
    """CPU per job of each pass, the median over ``runs``."""
    return {
        case: statistics.median(run[index].cpu_us_per_job for run in runs)
        for index, case in enumerate(PASSES)
    }


def _check(
    spec: ConsumerSpec, moto: list[PassResult], in_memory: list[list[PassResult]], problems: list[str]
) -> None:
    """Every job ran exactly as expected, the responder counted what moto counted, the budget held."""
    for results in (moto, *in_memory):
        for result in results:
            if result.failures or result.executed != result.expected_runs:
                problems.append(
                    f"{spec.name} {result.name}: {result.failures} failed, job ran {result.executed} times "
                    f"(expected {result.expected_runs})"
                )
    for results in in_memory:
        for on_moto, here in zip(moto, results, strict=True):
            if on_moto.calls_by_operation != here.calls_by_operation:
                problems.append(
                    f"{spec.name} {here.name}: the responder saw {here.calls_by_operation}, moto "
                    f"{on_moto.calls_by_operation}: the in-memory model disagrees with moto"
                )
    for result in moto:
        budget = spec.budget.get(result.name)
        if budget is not None and result.calls_per_job != budget:
            problems.append(
                f"BUDGET BROKEN: {spec.name} {result.name}: {result.calls_per_job:.2f} DynamoDB calls per "
                f"job (budget {budget:g})"
            )


_Pick = Callable[[_Measured, int], float]
#: Figures 1-4: (figure, measure, unit, digits, value of pass ``i``, target by subject or (subject, pass)).
_CONSUMER_FIGURES: list[tuple[int, str, str, int, _Pick, dict[str | tuple[str, str], Target]]] = [
    (
        1,
        "DynamoDB calls per job",
        "calls/job",
        2,
        lambda m, i: m.moto[i].calls_per_job,
        # the claim mode's budget: a new job 2 (claim + completion), a duplicate 1 (the refused claim)
        {
            ("claim", "new jobs"): Target("=", 2),
            ("claim", "duplicates"): Target("=", 1),
            "state": Target("<=", 0.2),
        },
    ),
    (
        2,
        "framework CPU per job, DynamoDB answered instantly",
        "us/job",
        0,
        lambda m, i: m.cpu_us[PASSES[i]],
        {"claim": Target("<=", 0.5, "ratio"), "state": Target("<=", 0.5, "ratio")},
    ),
    (
        2,
        "framework CPU per job without botocore, DynamoDB answered instantly",
        "us/job",
        0,
        lambda m, i: m.bare_cpu_us[PASSES[i]],
        {"claim": Target("<=", 1.0, "ratio")},
    ),
    (
        3,
        "jobs per second per group, {delay} ms per DynamoDB call",
        "jobs/s",
        0,
        lambda m, i: m.delayed[i].jobs_per_second,
        {"state": Target(">=", 5, "ratio")},
    ),
    (4, "jobs per second on moto in-process", "jobs/s", 0, lambda m, i: m.moto[i].jobs_per_second, {}),
]


def _consumer_rows(settings: Settings, problems: list[str], skipped: list[str]) -> list[Row]:
    notes: dict[str, str] = {}
    runnable = []
    for name in settings.consumers:
        spec = CONSUMERS[name]
        status = spec.status()
        if status is None:
            runnable.append(spec)
        else:
            notes[name] = status
            skipped.append(f"{name}: {spec.why_not}")
    measured: dict[str, _Measured | None] = dict.fromkeys(settings.consumers)
    measured.update(_measure_consumers(runnable, settings, problems))
    baseline = measured.get(BASELINE)
    rows = []
    for figure, measure, unit, digits, pick, targets in _CONSUMER_FIGURES:
        for index, case in enumerate(PASSES):
            for name in settings.consumers:
                if name == BASELINE:
                    continue
                mine = measured[name]
                target = targets.get((name, case), targets.get(name))
                rows.append(
                    Row(
                        figure=figure,
                        measure=measure.format(delay=f"{settings.ddb_delay_ms:g}"),
                        case=case,
                        subject=name,
                        value=None if mine is None else pick(mine, index),
                        unit=unit,
                        baseline=BASELINE,
                        baseline_value=None if baseline is None else pick(baseline, index),
                        target=target,
                        note=notes.get(name, ""),
                        digits=digits,
                    )
                )
    return rows


def _cold_start_rows(settings: Settings) -> list[Row]:
    if settings.cold_start_runs <= 0:
        return [Row(5, "import time", "", "entry point", None, "ms", note="skipped (--cold-start-runs 0)")]
    with_baseline = available() is not None
    rows = []
    for bytecode, case in ((True, "cached .pyc"), (False, "no .pyc (compiled from source)")):
        for suffix, label in (("", "entry point"), ("; import boto3", "entry point + boto3")):
            _progress(f"cold start: {label}, {case} (figure 5)")
            ours = import_seconds(
                label, OURS_IMPORT + suffix, runs=settings.cold_start_runs, bytecode=bytecode
            )
            theirs = (
                import_seconds(
                    label, POWERTOOLS_IMPORT + suffix, runs=settings.cold_start_runs, bytecode=bytecode
                )
                if with_baseline
                else None
            )
            rows.append(
                Row(
                    5,
                    "import time, median of fresh interpreters",
                    case,
                    label,
                    ours.median_ms,
                    "ms",
                    baseline="powertools batch + idempotency" + (" + boto3" if suffix else ""),
                    baseline_value=theirs.median_ms if theirs else None,
                    digits=1,
                )
            )
    return rows


def _producer_rows(settings: Settings) -> list[Row]:
    _progress("producer on moto (figure 6)")
    moto = measure_on_moto(settings.jobs, settings.groups, repeats=settings.producer_repeats)
    _progress(f"producer, {settings.sqs_delay_ms:g} ms per SQS call (figure 6)")
    delayed = measure_with_delay(settings.jobs, settings.groups, delay_seconds=settings.sqs_delay_ms / 1000)
    baseline = "send_message per job"
    speed = Target(">=", 5, "ratio")
    return [
        Row(6, "SQS calls per job", "", "send_batch", moto.batch_calls_per_job, "calls/job", baseline,
            moto.single_calls_per_job, Target("<=", 0.1)),
        Row(6, "jobs per second", "moto in-process", "send_batch", moto.batch_jobs_per_second, "jobs/s",
            baseline, moto.single_jobs_per_second, speed, digits=0),
        Row(6, "jobs per second", f"{settings.sqs_delay_ms:g} ms per SQS call", "send_batch",
            delayed.batch_jobs_per_second, "jobs/s", baseline, delayed.single_jobs_per_second, speed,
            digits=0),
    ]  # fmt: skip


def _synth_rows(settings: Settings) -> list[Row]:
    measure = f"synth time, median of {settings.synth_runs} runs"
    if settings.synth_runs <= 0:
        return [Row(7, measure, "", "sample app", None, "s", note="skipped (--synth-runs 0)")]
    _progress(f"synth, {settings.synth_runs} runs per side (figure 7)")
    synth = measure_synth_in_child(settings.synth_runs)
    return [
        Row(7, measure, "", "OrderedAgentQueue (one queue, defaults)", synth.sample_median, "s",
            "hand-written stack", synth.handwritten_median, Target("<=", 1.1, "ratio"), digits=3),
    ]  # fmt: skip


_LOCAL_MEASURE = "jobs per second through emulator + drain (warm workers)"
_LOCAL_CEILING = "jobs per second the emulator's one core allows (1000 / its CPU ms per job)"
_MACHINE_CEILING = "jobs per second the machine's cores allow (cores x 1000 / pipeline CPU ms per job)"


def _local_rows(settings: Settings) -> list[Row]:
    _progress("local pipeline: emulator + drain (figure 8)")
    measured = measure_local_pipeline(settings.local_jobs, GROUP_COUNTS, settings.local_concurrency)
    if measured is None:
        return [
            Row(8, _LOCAL_MEASURE, f"{groups} groups", "local pipeline", None, "jobs/s", note=NOT_MEASURED)
            for groups in GROUP_COUNTS
        ]
    one_group = measured[0]
    rows = []
    for result in measured:
        case = f"{result.groups} group{'s' if result.groups > 1 else ''}"
        emulator_ms, pipeline_ms = result.emulator_cpu_ms_per_job, result.pipeline_cpu_ms_per_job
        used = (
            ""
            if emulator_ms is None or pipeline_ms is None
            else f"; used {result.jobs_per_second * pipeline_ms / 1000:.2f} cores, the emulator "
            f"{result.jobs_per_second * emulator_ms / 1000:.2f}"
        )
        cold = f"; {result.cold_starts} cold start(s) in the timed drain" if result.cold_starts else ""
        rows += [
            Row(8, _LOCAL_MEASURE, case, f"local pipeline, concurrency {result.concurrency}",
                result.jobs_per_second, "jobs/s", f"{one_group.groups} group", one_group.jobs_per_second,
                note=f"{result.jobs} jobs in {result.batches} batches{cold}{used}", digits=0),
            Row(8, _LOCAL_CEILING, case, "emulator (moto's server, one process)",
                result.emulator_ceiling_jobs_per_second, "jobs/s",
                note=NOT_MEASURED if emulator_ms is None else f"{emulator_ms:.1f} ms emulator CPU per job",
                digits=0),
            Row(8, _MACHINE_CEILING, case, "emulator + workers + drain",
                result.machine_ceiling_jobs_per_second, "jobs/s",
                note=NOT_MEASURED if pipeline_ms is None
                else f"{pipeline_ms:.1f} ms CPU per job on {result.cores} cores", digits=0),
        ]  # fmt: skip
    return rows


#: Figure 9's measures: (measure, unit, digits, value of a case in total, per job). The first delivery
#: has them all; a redelivery and duplicates the units, SQS and dollars (``_OTHER_DELIVERY_MEASURES``).
_COST_MEASURES: list[tuple[str, str, int, Callable[[JobCost], float]]] = [
    ("DynamoDB write units per job", "WCU/job", 2, lambda c: c.per_job(c.write_units)),
    ("DynamoDB read units per job", "RCU/job", 2, lambda c: c.per_job(c.read_units)),
    ("SQS requests per job (producer, mapping, runtime)", "requests/job", 2,
     lambda c: c.per_job(c.sqs_requests)),
    (f"Lambda GB-seconds per job (CPU at the function's memory + {LATENCY_MS_PER_CALL:g} ms per call)",
     "GB-s/job", 5, lambda c: c.per_job(c.gb_seconds)),
    ("log bytes per job (the runtime's lines)", "B/job", 0, lambda c: c.per_job(c.log_bytes)),
    ("log bytes per job at outcome_lines=BATCH (successes summarized per batch)", "B/job", 0,
     lambda c: c.per_job(c.batch_log_bytes)),
    ("dollars per million jobs (us-east-1 on-demand)", "$/M jobs", 2,
     lambda c: c.dollars_per_million_jobs["total"]),
]  # fmt: skip
_OTHER_DELIVERY_MEASURES = {_COST_MEASURES[i][0] for i in (0, 1, 2, 6)}
#: The target of state mode's write units per job for states up to 1 KB, by batch fill.
COST_GOALS = {FILLS[0]: Target("<=", 2.0), FILLS[1]: Target("<=", 1.0)}
CROSSOVER_MEASURE = "state size above which state mode's write units per job exceed claim mode's"


def _cost_note(cost: JobCost, unit: str) -> str:
    """The dollars by service, or the SQS requests by origin (the runtime's counted by operation)."""
    if unit == "$/M jobs":
        dollars = cost.dollars_per_million_jobs
        return "; ".join(f"{name} {value:.3f}" for name, value in dollars.items() if name != "total")
    if unit == "requests/job":
        runtime = ", ".join(
            f"{name.removeprefix('sqs.')} {count}" for name, count in sorted(cost.sqs_by_operation.items())
        )
        return (
            f"producer {cost.per_job(cost.producer_sqs_requests):.2f} (modelled); mapping "
            f"{cost.per_job(cost.mapping_sqs_requests):.2f} (modelled); runtime "
            f"{cost.per_job(cost.runtime_sqs_requests):.2f} (counted{': ' + runtime if runtime else ''})"
        )
    return ""


def _cost_rows(settings: Settings, problems: list[str]) -> list[Row]:
    first = _COST_MEASURES[0][0]
    if settings.cost_jobs <= 0:
        return [Row(9, first, "", "claim", None, "WCU/job", note="skipped (--cost-jobs 0)")]
    measured: dict[tuple[str, str, str], JobCost] = {}
    for case in cost_cases():
        _progress(f"{case.subject}, {case.fill}: capacity, requests, logs (figure 9)")
        costs = measure_cost(case, jobs=settings.cost_jobs, warmup_per_group=settings.cost_warmup)
        for delivery, cost in costs.items():
            measured[case.subject, case.fill, delivery] = cost
            if cost.failures or cost.executed != expected_runs(cost):
                problems.append(
                    f"figure 9 {case.subject} {case.fill} {delivery}: {cost.failures} failed, job ran "
                    f"{cost.executed} times (expected {expected_runs(cost)})"
                )
    rows = []
    for delivery in DELIVERIES:
        for measure, unit, digits, pick in _COST_MEASURES:
            if delivery != FIRST_DELIVERY and measure not in _OTHER_DELIVERY_MEASURES:
                continue
            for fill in FILLS:
                claim = measured.get(("claim", fill, delivery))
                for (subject, case_fill, case_delivery), cost in measured.items():
                    if (case_fill, case_delivery) != (fill, delivery):
                        continue
                    small_state = cost.case.state_bytes is not None and cost.case.state_bytes <= 1024
                    goal = measure == first and small_state and delivery == FIRST_DELIVERY
                    rows.append(
                        Row(9, measure, delivery_case(fill, delivery), subject, pick(cost), unit,
                            baseline="" if subject == "claim" or claim is None else "claim",
                            baseline_value=None if subject == "claim" or claim is None else pick(claim),
                            target=COST_GOALS[fill] if goal else None,
                            note=_cost_note(cost, unit), digits=digits)
                    )  # fmt: skip
    for fill in FILLS:
        claim = measured.get(("claim", fill, FIRST_DELIVERY))
        state = [
            cost
            for (_, case_fill, delivery), cost in measured.items()
            if (case_fill, delivery) == (fill, FIRST_DELIVERY) and cost.case.state_bytes
        ]
        crossover = crossover_state_bytes(state, claim.per_job(claim.write_units)) if claim else None
        overhead = min((c.state_overhead_bytes or 0.0 for c in state), default=0.0)
        rows.append(
            Row(9, CROSSOVER_MEASURE, fill, "state", None if crossover is None else crossover / 1024, "KB",
                note=f"each state write carries {overhead:,.0f} B of bookkeeping and keys", digits=1)
        )  # fmt: skip
    return rows


#: Figure 10's measure: one poll of ``JobOutcomes.wait``, which polls once a second at its cap.
OUTCOME_MEASURE = "DynamoDB read units per poll of JobOutcomes.wait (= per second of waiting at its 1 s cap)"


def _outcome_rows(settings: Settings) -> list[Row]:
    _progress("job outcome reads (figure 10)")
    return [
        Row(10, OUTCOME_MEASURE, read.case, read.mode, read.read_units, "RCU/poll",
            target=Target("<=", 1) if read.case.startswith("running") else None,
            note=f"{read.calls} call(s), status {read.status}", digits=0)
        for read in measure_outcome_reads()
    ]  # fmt: skip


def run(settings: Settings, command: str) -> Results:
    """Measure every figure once; see the module docstring."""
    started = time.perf_counter()
    results = Results(command=command, parameters=asdict(settings), machine=machine())
    wanted = set(settings.only or FIGURES)
    if wanted & {1, 2, 3, 4}:
        results.rows += _consumer_rows(settings, results.problems, results.notes)
    figures = (
        (5, _cold_start_rows),
        (6, _producer_rows),
        (7, _synth_rows),
        (8, _local_rows),
        (10, _outcome_rows),
    )
    for figure, rows in figures:
        if figure in wanted:
            results.rows += rows(settings)
    if 9 in wanted:
        results.rows += _cost_rows(settings, results.problems)
        if settings.controls:
            _progress("controls: cancel, hold + release, supersede, run first, pace (figure 9)")
            results.rows += control_rows(results.problems)
    if 11 in wanted:
        _progress("container workers: heartbeats, CPU against Lambda, slots, dollars (figure 11)")
        results.rows += worker_rows(
            slot_jobs=settings.worker_jobs, cpu_repeats=settings.cpu_repeats, problems=results.problems
        )
    skipped = [
        str(figure)
        for figure in FIGURES
        if figure not in wanted and not (figure <= 4 and wanted & {1, 2, 3, 4})
    ]
    if skipped:
        results.notes.append(
            f"figures {', '.join(skipped)}: not run (--only {' '.join(map(str, settings.only))})"
        )
    results.wall_seconds = time.perf_counter() - started
    return results
