"""The benchmark (``python -m benchmarks``) on a tiny workload: it measures what it claims to."""

from __future__ import annotations

import pytest

from benchmarks import report
from benchmarks.cold_start import import_seconds
from benchmarks.runtime_throughput import REGION, run_ours, workload


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    # The benchmark fills these in with setdefault/pop; set them here so the test leaves no trace.
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


def test_our_passes_run_every_new_job_once_and_no_duplicate_within_budget() -> None:
    # GIVEN / WHEN a tiny workload runs through our runtime
    new, duplicates = run_ours(workload(jobs=20, groups=4, batch_size=10))
    # THEN every new job ran once at 2 DynamoDB calls, and no duplicate ran, at 1 call each
    assert (new.records, new.executed, new.dynamodb_calls, new.failures) == (20, 20, 40, 0)
    assert (duplicates.records, duplicates.executed, duplicates.dynamodb_calls, duplicates.failures) == (
        20,
        0,
        20,
        0,
    )


def test_powertools_baseline_processes_the_same_workload() -> None:
    pytest.importorskip("aws_lambda_powertools")
    from benchmarks.powertools_baseline import run_powertools

    # GIVEN / WHEN the same tiny workload runs through the Powertools consumer
    new, duplicates = run_powertools(workload(jobs=20, groups=4, batch_size=10))
    # THEN it did the same work (its call counts are what facts.md says: 2 and 1)
    assert (new.system, new.executed, new.dynamodb_calls, new.failures) == ("powertools", 20, 40, 0)
    assert (duplicates.executed, duplicates.dynamodb_calls, duplicates.failures) == (0, 20, 0)


def test_report_says_the_baseline_was_skipped_and_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN Powertools cannot be imported
    monkeypatch.setattr(report, "available", lambda: None)
    # WHEN the report runs
    status = report.main(["--jobs", "10", "--groups", "2", "--no-cold-start"])
    # THEN our figures are printed, the baseline is reported skipped with the install command
    out = capsys.readouterr().out
    assert status == 0
    assert "constructs-fifo  new jobs" in out
    assert "powertools       new jobs" not in out
    assert "baseline skipped: aws-lambda-powertools is not importable" in out
    assert "pip install -e '.[bench]'" in out


def test_import_timing_runs_fresh_interpreters_and_names_a_failing_statement() -> None:
    # GIVEN / WHEN an import is timed twice
    timing = import_seconds("json", "import json", runs=2, bytecode=False)
    # THEN there are two positive timings; a statement that fails is named in the error
    assert len(timing.seconds) == 2
    assert all(0 < seconds < 5 for seconds in timing.seconds)
    with pytest.raises(RuntimeError, match="no_such_module_xyz"):
        import_seconds("missing", "import no_such_module_xyz", runs=1)
