"""Figure 8: jobs per second through the local emulator and ``drain`` at 1, 4 and 16 groups.

One embedded emulator, the sample app deployed into it once with the real CDK CLI (as ``make demo``
does), then for each group count: ``jobs`` notification jobs (the claim-mode queue: one claim, one
conditional put in the job, one completion each) sent over that many groups with
``JobProducer.send_batch``, and the local event source mapping timed until the queue is empty. A
group is serial (FIFO: one batch of a group in flight at a time), so jobs per second grow with the
group count until the drain's worker pool (the deployed reserved concurrency) is the limit: that
growth is what the figure shows. Absolute numbers are the emulator's (moto's server on this machine),
not Lambda's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GROUP_COUNTS", "NOT_MEASURED", "LocalPipelineResult", "measure_local_pipeline"]

#: The group counts of figure 8.
GROUP_COUNTS = (1, 4, 16)
NOT_MEASURED = "not measured in this run"
#: The repository (the sample app's ``cdk.json``).
_APP_DIR = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class LocalPipelineResult:
    """Jobs per second through emulator and drain at one group count."""

    groups: int
    jobs: int
    jobs_per_second: float


def measure_local_pipeline(
    jobs: int = 240, group_counts: tuple[int, ...] = GROUP_COUNTS
) -> list[LocalPipelineResult] | None:
    """Measure the local pipeline (see the module docstring); ``None`` when ``jobs`` is 0 (skipped)."""
    if jobs <= 0:
        return None
    from constructs_fifo.client import JobMessage  # noqa: PLC0415 - the local extra, only when measured
    from constructs_fifo.local.demo.sample_app import NOTIFICATION_TYPE  # noqa: PLC0415
    from constructs_fifo.local.demo.steps import (  # noqa: PLC0415
        DemoOptions,
        Phase,
        connect,
        drain,
        make_clients,
        prepare,
        send,
    )

    def quiet(_: str) -> None:
        return None

    options = DemoOptions(app_dir=_APP_DIR)
    results: list[LocalPipelineResult] = []
    with connect(options, Phase()) as target:
        queue = prepare(options, target, say=quiet).notifications
        sqs = make_clients(target).sqs
        for groups in group_counts:
            messages = [
                JobMessage(
                    f"bench-{groups}-{index:05d}",
                    NOTIFICATION_TYPE,
                    {"channel": "bench", "text": f"job {index}"},
                    group=f"ws#bench-{groups}-{index % groups}",
                )
                for index in range(jobs)
            ]
            send(messages, queue.queue_url, sqs_client=sqs, target=target)
            started = time.perf_counter()
            drain(queue, target=target, say=quiet)
            results.append(LocalPipelineResult(groups, jobs, jobs / (time.perf_counter() - started)))
    return results
