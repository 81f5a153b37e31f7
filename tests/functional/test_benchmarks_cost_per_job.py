"""Figure 9 (``python -m benchmarks --only 9``) at a tiny size: it runs every case through the runtime's
entry point, and its units, requests, log bytes and dollars add up. No timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import report
from benchmarks.consumers import CONSUMERS
from benchmarks.cost_per_job import FILLS, CostCase, measure_cost
from benchmarks.workload import REGION

TINY = ["--only", "9", "--cost-jobs", "20", "--cost-warmup", "1"]


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


def test_figure_9_alone_measures_every_case_and_writes_its_section_and_chart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN / WHEN figure 9 runs alone at a tiny size
    status = report.main([*TINY, "--json", "--out", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    # THEN it succeeded, ran nothing else, and has a row per measure, case and fill
    assert status == 0
    assert data["problems"] == []
    assert all(not data["figures"][str(n)]["rows"] for n in range(1, 9))
    rows = {
        (row["measure"].split(" (")[0], row["case"], row["subject"]): row
        for row in data["figures"]["9"]["rows"]
    }
    for fill in FILLS:
        # THEN claim mode pays its two small writes per job and nothing to read; its log lines count
        assert rows["DynamoDB write units per job", fill, "claim"]["value"] == 2.0
        assert rows["DynamoDB read units per job", fill, "claim"]["value"] == 0.0
        assert rows["log bytes per job", fill, "claim"]["value"] > 0
        # THEN state mode's small states carry the goal as a target; big states cost more
        assert rows["DynamoDB write units per job", fill, "state 1 KB"]["target"] is not None
        big = rows["DynamoDB write units per job", fill, "state 100 KB"]
        assert big["value"] > 2.0
        assert big["target"] is None
        assert (
            rows["dollars per million jobs", fill, "state 100 KB"]["value"]
            > rows["dollars per million jobs", fill, "claim"]["value"]
        )
        # THEN the crossover is reported for each fill
        crossover = rows[
            "state size above which state mode's write units per job exceed claim mode's", fill, "state"
        ]
        assert crossover["value"] is not None
    # THEN BENCHMARKS.md has figure 9's section with the prices, and the chart is a PNG
    markdown = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert "## Figure 9: what a job costs" in markdown
    assert "https://aws.amazon.com/dynamodb/pricing/on-demand/" in markdown
    assert (tmp_path / "capacity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_sqs_requests_and_dollars_follow_the_stated_models() -> None:
    # GIVEN claim mode at ten jobs per group: 100 jobs, 10 full batches
    case = CostCase("claim", FILLS[1], CONSUMERS["claim"])
    # WHEN measured at 256 MB
    cost = measure_cost(case, jobs=100, warmup_per_group=1, memory_mb=256)
    # THEN every job ran once; SQS: 10 producer batches, a receive and a delete per batch, no call of
    # the runtime's own; Lambda: one request per batch; the dollars add up to their total
    assert (cost.jobs, cost.batches, cost.executed, cost.failures) == (100, 10, 100, 0)
    assert (cost.producer_sqs_requests, cost.mapping_sqs_requests, cost.runtime_sqs_requests) == (10, 20, 0)
    assert cost.per_job(cost.write_units) == 2.0
    dollars = cost.dollars_per_million_jobs
    assert dollars["total"] == pytest.approx(sum(v for k, v in dollars.items() if k != "total"))
    assert dollars["DynamoDB writes"] == pytest.approx(2.0 * 0.625)
    assert dollars["Lambda requests"] == pytest.approx(0.1 * 0.20)
