"""The in-memory runs of figures 2 and 3: interleaving the consumers, or leaving botocore out, changes no
call and no outcome."""

from __future__ import annotations

import pytest

from benchmarks.consumers import CONSUMERS
from benchmarks.in_memory import run_in_memory, run_interleaved
from benchmarks.workload import workload

pytestmark = pytest.mark.usefixtures("bench_environment")


@pytest.mark.parametrize("botocore", [True, False], ids=["boto3 clients", "without botocore"])
def test_interleaved_consumers_each_make_the_calls_and_runs_of_a_run_of_their_own(botocore: bool) -> None:
    # GIVEN three consumers with different tables and call patterns, over 30 jobs in batches of 10
    work = workload(jobs=30, groups=3, batch_size=10)
    names = ["claim", "claim-park", "state"]
    # WHEN they run interleaved batch by batch (through boto3 or straight to the model), and each alone
    together = run_interleaved([CONSUMERS[name] for name in names], work, botocore=botocore)
    # THEN each consumer's passes count the calls, runs and failures of its own run, pass by pass
    assert list(together) == names
    for name in names:
        alone = run_in_memory(CONSUMERS[name], work)
        for mixed, single in zip(together[name], alone, strict=True):
            assert (mixed.consumer, mixed.name, mixed.jobs) == (single.consumer, single.name, single.jobs)
            assert mixed.calls_by_operation == single.calls_by_operation
            assert (mixed.executed, mixed.failures) == (single.executed, single.failures)
            assert (single.executed, single.failures) == (single.expected_runs, 0)
            assert mixed.cpu_seconds > 0
