"""Figure 8's arithmetic: the CPU it reads and the ceilings it derives (the run itself needs the CDK
CLI and the emulator, about a minute: ``python -m benchmarks --only 8``). No timing is asserted."""

from __future__ import annotations

import os

import pytest

from benchmarks.local_pipeline import LocalPipelineResult, process_cpu_seconds


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc (Linux)")
def test_the_cpu_of_a_living_process_is_read_and_of_an_absent_one_is_none() -> None:
    # GIVEN this process, and a pid above Linux's largest (pid_max is at most 2**22)
    # WHEN their CPU times are read
    mine, absent = process_cpu_seconds(os.getpid()), process_cpu_seconds(2**22 + 1)
    # THEN this process has one, the absent one none
    assert mine is not None and mine >= 0
    assert absent is None


def test_the_ceilings_are_the_cores_divided_by_the_cpu_per_job() -> None:
    # GIVEN 10 ms of emulator CPU and 16 ms of pipeline CPU per job on 2 cores
    result = LocalPipelineResult(16, 240, 10, 60.0, 24, 0, 10.0, 16.0, 2)
    # THEN the emulator's one core allows 100 jobs/s and the machine's two 125
    assert result.emulator_ceiling_jobs_per_second == pytest.approx(100.0)
    assert result.machine_ceiling_jobs_per_second == pytest.approx(125.0)
    # GIVEN no CPU could be read THEN there is no ceiling
    unknown = LocalPipelineResult(16, 240, 10, 60.0, 24, 0, None, None, 2)
    assert unknown.emulator_ceiling_jobs_per_second is None
    assert unknown.machine_ceiling_jobs_per_second is None
