"""Figure 8: jobs per second through the local emulator and ``drain`` at 1, 4 and 16 groups.

One embedded emulator (a child process, as ``make demo`` runs it), the sample app deployed into it
once with the real CDK CLI, and one local event source mapping (``EventSourceRunner``) for the
claim-mode notification queue, kept open for the whole figure as Lambda keeps its execution
environments warm. A warm-up round first starts every worker (a cold start imports boto3 and the
runtime: figure 5's business, not throughput). Then, for each group count, ``jobs`` notification
jobs (one claim, one conditional put in the job, one completion each) are sent over that many groups
with ``JobProducer.send_batch``, and the drain is timed from its start to the end of its last batch
(the DeleteMessageBatch included; not the second of quiet ``drain`` waits to call the queue empty).

A group is serial (FIFO: one batch of a group in flight at a time), so jobs per second grow with the
group count until something saturates. What saturates is read off the emulator's own CPU time
(``/proc``, Linux): moto's server answers every request in one Python process, so under its GIL it
uses at most one core, and ``1000 / (its CPU ms per job)`` is the most jobs per second it can serve;
the workers (one process per concurrency slot) and the drain share the machine's other core(s).
Absolute numbers are the emulator's on this machine, not Lambda's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.local.event_source.reports import InvocationReport
    from constructs_fifo.local.event_source.runner import EventSourceRunner
    from constructs_fifo.stacks.aws import AwsTarget

__all__ = ["GROUP_COUNTS", "NOT_MEASURED", "LocalPipelineResult", "measure_local_pipeline"]

#: The group counts of figure 8.
GROUP_COUNTS: Final = (1, 4, 16)
NOT_MEASURED: Final = "not measured in this run"
#: The repository (the sample app's ``cdk.json``).
_APP_DIR: Final = Path(__file__).resolve().parents[1]
#: Clock ticks per second of ``/proc/PID/stat``'s CPU times.
_CLOCK_TICKS_PER_SECOND: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class LocalPipelineResult:
    """Jobs per second through emulator and drain at one group count.

    Attributes
    ----------
    groups, jobs:
        The workload: ``jobs`` jobs spread round-robin over ``groups`` message groups.
    concurrency:
        Batches in flight at most (the drain's worker processes).
    jobs_per_second:
        ``jobs`` / seconds from the drain's start to the end of its last batch.
    batches:
        Invocations (a full FIFO batch is 10 records of one group).
    cold_starts:
        Workers started during the timed drain (0 once the warm-up started every slot).
    emulator_cpu_ms_per_job:
        The emulator process's CPU time over the same span, per job; ``None`` without ``/proc``.
    pipeline_cpu_ms_per_job:
        The CPU time of the emulator, the workers and this process (the drain) over the same span,
        per job; ``None`` without ``/proc``.
    cores:
        CPU cores this process may run on.
    """

    groups: int
    jobs: int
    concurrency: int
    jobs_per_second: float
    batches: int
    cold_starts: int
    emulator_cpu_ms_per_job: float | None
    pipeline_cpu_ms_per_job: float | None
    cores: int

    @property
    def emulator_ceiling_jobs_per_second(self) -> float | None:
        """Jobs per second the emulator's one core could serve: 1000 / its CPU ms per job."""
        cpu_ms = self.emulator_cpu_ms_per_job
        return 1000 / cpu_ms if cpu_ms else None

    @property
    def machine_ceiling_jobs_per_second(self) -> float | None:
        """Jobs per second the machine's cores could serve: cores x 1000 / the pipeline's CPU ms per job."""
        cpu_ms = self.pipeline_cpu_ms_per_job
        return self.cores * 1000 / cpu_ms if cpu_ms else None


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far, from ``/proc`` (``None`` where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS_PER_SECOND  # utime, stime


def _cpu_seconds(emulator_pid: int | None) -> tuple[float, float] | None:
    """CPU seconds so far of the emulator, and of the emulator, every other child (the workers) and
    this process together; ``None`` without ``/proc``."""
    if emulator_pid is None:
        return None
    emulator = process_cpu_seconds(emulator_pid)
    if emulator is None:
        return None
    me = os.getpid()
    children = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in (me, emulator_pid):
            continue
        try:
            parent = int((entry / "stat").read_text(encoding="ascii").rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # exited meanwhile
        if parent == me:
            children += process_cpu_seconds(int(entry.name)) or 0.0
    return emulator, emulator + children + time.process_time()


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def _deployed_emulator(
    concurrency: int | None,
) -> Iterator[tuple[AwsTarget, int | None, EventSourceRunner, SQSClient]]:
    """The emulator, its pid, a runner for the sample's notification queue, and the SQS client."""
    from constructs_fifo.demo.steps import DemoOptions, make_clients, prepare  # noqa: PLC0415
    from constructs_fifo.local.emulator.launch import require_server_packages  # noqa: PLC0415
    from constructs_fifo.local.emulator.process import EmulatorProcess  # noqa: PLC0415
    from constructs_fifo.local.event_source.runner import EventSourceRunner  # noqa: PLC0415

    def quiet(_: str) -> None:
        return None

    require_server_packages()
    emulator = EmulatorProcess()
    emulator.start()
    try:
        target = emulator.target()
        queue = prepare(DemoOptions(app_dir=_APP_DIR), target, say=quiet).notifications
        pid = emulator.process.pid if emulator.process is not None else None
        with EventSourceRunner.from_function(
            queue.function_name, target=target, queue_arn=queue.queue_arn, concurrency=concurrency
        ) as runner:
            yield target, pid, runner, make_clients(target).sqs
    finally:
        emulator.stop()


def measure_local_pipeline(
    jobs: int = 240, group_counts: tuple[int, ...] = GROUP_COUNTS, concurrency: int | None = None
) -> list[LocalPipelineResult] | None:
    """Measure the local pipeline (see the module docstring); ``None`` when ``jobs`` is 0 (skipped).

    ``concurrency`` overrides the deployed one (batches in flight at once), to find where the gain
    from more groups stops.
    """
    if jobs <= 0:
        return None
    from constructs_fifo.client import JobMessage  # noqa: PLC0415 - the local extra, only when measured
    from constructs_fifo.demo.sample_app import NOTIFICATION_TYPE  # noqa: PLC0415
    from constructs_fifo.demo.steps import send  # noqa: PLC0415

    results: list[LocalPipelineResult] = []
    with _deployed_emulator(concurrency) as (target, pid, runner, sqs):

        def run(name: str, count: int, groups: int) -> LocalPipelineResult:
            messages = [
                JobMessage(
                    f"bench-{name}-{index:05d}",
                    NOTIFICATION_TYPE,
                    {"channel": "bench", "text": f"job {index}"},
                    group=f"ws#bench-{name}-{index % groups}",
                )
                for index in range(count)
            ]
            send(messages, runner.queue.url, sqs_client=sqs, target=target)
            last: list[tuple[float, tuple[float, float] | None]] = []

            def on_batch(_: InvocationReport) -> None:
                last[:] = [(time.perf_counter(), _cpu_seconds(pid))]

            before = _cpu_seconds(pid)
            started = time.perf_counter()
            stats = runner.drain(until_empty=True, on_batch=on_batch)
            ended, after = last[0] if last else (time.perf_counter(), None)
            per_job = (
                None
                if before is None or after is None
                else [(end - start) * 1000 / count for start, end in zip(before, after, strict=True)]
            )
            return LocalPipelineResult(
                groups,
                count,
                runner.concurrency,
                count / (ended - started),
                stats.batches,
                stats.cold_starts,
                None if per_job is None else per_job[0],
                None if per_job is None else per_job[1],
                _cores(),
            )

        slots = runner.concurrency
        run("warm-up", slots * runner.mapping.batch_size, slots)  # starts every slot's worker
        results.extend(run(f"{groups}g", jobs, groups) for groups in group_counts)
    return results
