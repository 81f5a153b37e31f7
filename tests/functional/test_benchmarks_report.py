"""The benchmark (``python -m benchmarks``) on a tiny workload: it runs, its call counts are exact, and the
table and the JSON hold every figure. No timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import consumers, report
from benchmarks.consumers import CONSUMERS
from benchmarks.in_memory import run_in_memory
from benchmarks.results import FIGURES
from benchmarks.runtime_throughput import run_on_moto
from benchmarks.workload import workload

TINY = [
    "--jobs", "20", "--groups", "2", "--cold-start-runs", "0", "--synth-runs", "0", "--local-jobs", "0",
    "--cost-jobs", "0", "--no-controls", "--worker-jobs", "0",
]  # fmt: skip
FAST = ["--cpu-repeats", "1", "--producer-repeats", "1", "--sqs-delay-ms", "1", "--ddb-delay-ms", "1"]


pytestmark = pytest.mark.usefixtures("bench_environment")


@pytest.mark.parametrize("name", ["claim", "powertools"])
def test_each_consumer_costs_two_calls_per_new_job_and_one_per_duplicate_on_moto_and_in_memory(
    name: str,
) -> None:
    # GIVEN 20 jobs over 2 groups in Lambda-filled batches of 10
    work = workload(jobs=20, groups=2, batch_size=10)
    # WHEN the consumer runs on moto and against the in-memory responder
    for new, duplicates in (run_on_moto(CONSUMERS[name], work), run_in_memory(CONSUMERS[name], work)):
        # THEN every new job ran once for a conditional PutItem and an UpdateItem; no duplicate ran,
        # each costing the refused PutItem only; nothing failed
        assert (new.jobs, new.executed, new.failures) == (20, 20, 0)
        assert new.calls_by_operation == {"PutItem": 20, "UpdateItem": 20}
        assert (duplicates.executed, duplicates.failures) == (0, 0)
        assert duplicates.calls_by_operation == {"PutItem": 20}


def test_state_mode_costs_one_read_per_batch_and_one_write_per_group_and_batch() -> None:
    # GIVEN 20 jobs over 2 groups in Lambda-filled batches of 10 (one group per batch)
    work = workload(jobs=20, groups=2, batch_size=10)
    # WHEN state mode runs on moto and against the in-memory responder
    for new, duplicates in (run_on_moto(CONSUMERS["state"], work), run_in_memory(CONSUMERS["state"], work)):
        # THEN each batch of new jobs cost one BatchGetItem and one PutItem (0.2 calls per job), every
        # transition ran once; duplicates were read and recognised, nothing was written or run again
        assert (new.jobs, new.executed, new.failures) == (20, 20, 0)
        assert new.calls_by_operation == {"BatchGetItem": 2, "PutItem": 2}
        assert (duplicates.executed, duplicates.failures) == (0, 0)
        assert duplicates.calls_by_operation == {"BatchGetItem": 2}


def test_the_park_policy_adds_one_read_per_batch_to_claim_mode() -> None:
    work = workload(jobs=20, groups=2, batch_size=10)
    new, duplicates = run_on_moto(CONSUMERS["claim-park"], work)
    assert new.calls_by_operation == {"BatchGetItem": 2, "PutItem": 20, "UpdateItem": 20}
    assert duplicates.calls_by_operation == {"BatchGetItem": 2, "PutItem": 20}


def test_one_run_prints_json_with_every_figure_and_writes_the_markdown_and_the_chart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN / WHEN a tiny run asks for JSON
    status = report.main([*TINY, *FAST, "--json", "--out", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    # THEN it succeeded and every figure has rows; the exact counts are figure 1
    assert status == 0
    assert data["problems"] == []
    assert set(data["figures"]) == {str(number) for number in FIGURES}
    assert all(data["figures"][number]["rows"] for number in data["figures"])
    calls = {(row["subject"], row["case"]): row for row in data["figures"]["1"]["rows"]}
    assert (calls["claim", "new jobs"]["value"], calls["claim", "new jobs"]["baseline_value"]) == (2.0, 2.0)
    assert (calls["claim", "duplicates"]["value"], calls["claim", "duplicates"]["baseline_value"]) == (
        1.0,
        1.0,
    )
    assert calls["claim", "new jobs"]["met"] is True
    # THEN state mode meets its budget, and the skipped and unmeasured figures say so
    assert calls["state", "new jobs"]["value"] == 0.2
    assert calls["state", "new jobs"]["met"] is True
    assert data["figures"]["5"]["rows"][0]["note"].startswith("skipped")
    assert data["figures"]["8"]["rows"][0]["note"] == "not measured in this run"
    producer = data["figures"]["6"]["rows"][0]
    assert (producer["value"], producer["baseline_value"]) == (0.1, 1.0)
    # THEN BENCHMARKS.md holds the same table and names the chart, which is a PNG
    markdown = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert "| 1 | DynamoDB calls per job | new jobs | claim | 2.00 |" in markdown
    assert "](benchmarks.png)" in markdown
    assert (tmp_path / "benchmarks.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_table_names_every_figure_and_the_baseline_that_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN Powertools cannot be imported
    monkeypatch.setattr(consumers, "available", lambda: None)
    # WHEN a tiny run prints its table
    status = report.main([*TINY, *FAST, "--out", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    # THEN every figure has a line, ours has its value and no ratio, and the baseline's absence is
    # explained with the install command
    assert status == 0
    assert {line.split()[0] for line in lines[1:] if line[:1].isdigit()} == {str(n) for n in FIGURES}
    claim = next(line for line in lines if line.startswith("1 ") and " claim " in line)
    assert " 2.00 " in claim
    assert "1.00x" not in claim
    assert any(
        line.startswith("not measured: powertools: aws-lambda-powertools is not importable")
        and "pip install -e '.[bench]'" in line
        for line in lines
    )
    assert not any(line.startswith("not measured: state") for line in lines)


def test_only_runs_the_figures_asked_for_and_names_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN / WHEN a run asks for figure 5 alone (and skips its timing)
    status = report.main([*TINY, "--only", "5", "--json", "--out", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    # THEN only figure 5 has rows, and the run says which figures it did not run and why
    assert status == 0
    assert [number for number, figure in data["figures"].items() if figure["rows"]] == ["5"]
    assert data["notes"] == ["figures 1, 2, 3, 4, 6, 7, 8, 9, 10, 11: not run (--only 5)"]
