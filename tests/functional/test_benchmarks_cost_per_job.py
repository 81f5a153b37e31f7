"""Figure 9 (``python -m benchmarks --only 9``) at a tiny size: it runs every case through the runtime's
entry point, and its units, requests, log bytes and dollars add up, for a first delivery, a redelivery
and duplicates. No timing is asserted."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report
from benchmarks.consumers import CONSUMERS, build_claim
from benchmarks.cost_per_job import (
    DUPLICATES,
    FILLS,
    FIRST_DELIVERY,
    REDELIVERED,
    CostCase,
    cost_cases,
    delivery_case,
    measure_cost,
)
from constructs_fifo.runtime.exceptions import PermanentJobError

#: Figure 9 at a tiny size, without its controls (tests/functional/test_benchmarks_control_rows.py).
TINY = ["--only", "9", "--cost-jobs", "20", "--cost-warmup", "1", "--no-controls"]


pytestmark = pytest.mark.usefixtures("bench_environment")


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
        # THEN state mode's small states carry the cost target; big states cost more
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
        # THEN a redelivery and duplicates have their units and dollars, but no goal
        for delivery in (REDELIVERED, DUPLICATES):
            again = rows["DynamoDB write units per job", delivery_case(fill, delivery), "state 1 KB"]
            assert again["target"] is None
            assert ("dollars per million jobs", delivery_case(fill, delivery), "claim") in rows
    # THEN BENCHMARKS.md has figure 9's two tables with the prices, its rows only there, and the chart
    markdown = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert "## Figure 9: what a job costs" in markdown
    assert "### Redeliveries and duplicates" in markdown
    assert "| state 10 KB | one job per group | 11.00 / 12.00 / 0.00 |" in markdown
    assert "https://aws.amazon.com/dynamodb/pricing/on-demand/" in markdown
    assert "| 9 |" not in markdown
    assert (tmp_path / "capacity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_sqs_requests_and_dollars_follow_the_stated_models() -> None:
    # GIVEN claim mode at ten jobs per group: 100 jobs, 10 full batches
    case = CostCase("claim", FILLS[1], CONSUMERS["claim"])
    # WHEN measured at 256 MB
    cost = measure_cost(case, jobs=100, warmup_per_group=1, memory_mb=256)[FIRST_DELIVERY]
    # THEN every job ran once; SQS: 10 producer batches, a receive and a delete per batch, no call of
    # the runtime's own; Lambda: one request per batch; the dollars add up to their total
    assert (cost.jobs, cost.batches, cost.executed, cost.failures) == (100, 10, 100, 0)
    assert (cost.producer_sqs_requests, cost.mapping_sqs_requests, cost.runtime_sqs_requests) == (10, 20, 0)
    assert cost.per_job(cost.write_units) == 2.0
    dollars = cost.dollars_per_million_jobs
    assert dollars["total"] == pytest.approx(sum(v for k, v in dollars.items() if k != "total"))
    assert dollars["DynamoDB writes"] == pytest.approx(2.0 * 0.625)
    assert dollars["Lambda requests"] == pytest.approx(0.1 * 0.20)


def _state_case(size_kb: float, fill: str) -> CostCase:
    (case,) = [c for c in cost_cases((size_kb,)) if c.fill == fill and c.state_bytes is not None]
    return case


def test_a_redelivered_state_group_pays_one_marker_unit_not_a_second_rewrite_of_its_state() -> None:
    # GIVEN state mode with a 10 KB state, batches of one job per group (each job is its group's commit)
    case = _state_case(10.0, FILLS[0])
    # WHEN new jobs are delivered, and other new jobs, never run, arrive with ApproximateReceiveCount 2
    costs = measure_cost(case, jobs=20, warmup_per_group=1, memory_mb=256)
    first, again = costs[FIRST_DELIVERY], costs[REDELIVERED]
    commit = first.per_job(first.write_units)
    # THEN the commit writes the whole item (10 KB and its bookkeeping: 11 units) once per job
    assert commit == 11.0
    # THEN a redelivery adds the run marker, one unit per group and batch, not a rewrite of the state
    # (which cost the commit's units again before the marker moved to its own run item: 22)
    assert again.per_job(again.write_units) == commit + 1
    # THEN its read asks for each group's run item too: one read unit more per group
    assert again.per_job(again.read_units) == first.per_job(first.read_units) + 1
    # THEN every job ran once, none failed, and the redelivery has no producer send
    assert (again.executed, again.failures, again.producer_sqs_requests) == (20, 0, 0)


def test_duplicates_cost_state_mode_its_read_and_claim_mode_one_refused_write() -> None:
    # GIVEN state mode (0.1 KB state) and claim mode, ten jobs per group per batch
    state = measure_cost(_state_case(0.1, FILLS[1]), jobs=20, warmup_per_group=1, memory_mb=256)
    claim = measure_cost(CostCase("claim", FILLS[1], CONSUMERS["claim"]), jobs=20, warmup_per_group=1)
    # WHEN the committed batches are delivered again (duplicates) and new jobs are redelivered
    # THEN no duplicate runs: state mode writes nothing, claim mode one refused claim per job
    assert (state[DUPLICATES].executed, claim[DUPLICATES].executed) == (0, 0)
    assert state[DUPLICATES].write_units == 0.0
    assert claim[DUPLICATES].per_job(claim[DUPLICATES].write_units) == 1.0
    # THEN claim mode ignores the receive count: a redelivered job costs what a new one does
    assert claim[REDELIVERED].per_job(claim[REDELIVERED].write_units) == 2.0
    assert claim[REDELIVERED].executed == 20
    # THEN the runtime made no SQS call of its own (counted): nothing failed, died or parked
    assert all(cost.runtime_sqs_requests == 0 for cost in [*state.values(), *claim.values()])


def _fails_every_fifth_job(job: Any) -> None:
    if int(job.id.rsplit("-", 1)[1]) % 5 == 4:
        raise PermanentJobError(f"job {job.id} fails for good (test)")


def test_the_runtimes_own_sqs_calls_are_counted_not_modelled() -> None:
    # GIVEN claim mode whose every fifth job dies (CONTINUE: sent to the dead-letter queue)
    spec = replace(
        CONSUMERS["claim"], name="claim-dying", build=partial(build_claim, job=_fails_every_fifth_job)
    )
    # WHEN 20 new jobs are measured, one job per group
    cost = measure_cost(CostCase("claim-dying", FILLS[0], spec), jobs=20, warmup_per_group=0)[FIRST_DELIVERY]
    # THEN the runtime's dead-letter sends are counted by operation and in the SQS requests, beside
    # the modelled producer sends (2 batches of 10) and the mapping's receive and delete per batch
    assert cost.sqs_by_operation == {"sqs.SendMessage": 4}
    assert (cost.runtime_sqs_requests, cost.executed) == (4, 20)
    assert cost.sqs_requests == 2 + 2 * 2 + 4
