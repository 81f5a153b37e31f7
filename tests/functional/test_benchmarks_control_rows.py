"""Figure 9's rows and section of what the controls cost (``benchmarks/control_rows.py``): each case's
calls, read and write units and SQS requests per job beside its consumer's uncontrolled jobs, the
uncontrolled rows holding figure 1's budget. No timing is asserted."""

from __future__ import annotations

import pytest

from benchmarks.control_costs import CONTROL_CASES, UNCONTROLLED
from benchmarks.control_rows import CONTROL_MEASURES, control_rows
from benchmarks.cost_markdown import cost_section
from benchmarks.results import Results

pytestmark = pytest.mark.usefixtures("bench_environment")

#: Claim mode's uncontrolled jobs and its cancel before a job starts: two cases, one consumer.
CASES = tuple(c for c in CONTROL_CASES if c.consumer == "claim" and c.control in (UNCONTROLLED, "cancel"))[:2]


def test_control_rows_put_each_case_beside_its_uncontrolled_jobs_and_hold_figure_1s_budget() -> None:
    # GIVEN / WHEN the rows of claim mode's uncontrolled jobs and of a cancel before the job starts
    problems: list[str] = []
    rows = control_rows(problems, CASES)
    # THEN every case ran as expected and agreed with moto
    assert problems == []
    by = {(row.measure, row.case): row for row in rows}
    assert len(rows) == len(CASES) * len(CONTROL_MEASURES)
    calls, reads, writes, sqs = (measure for measure, _unit, _pick in CONTROL_MEASURES)
    plain, cancel = (case.label for case in CASES)
    # AND the uncontrolled row is figure 1's default path, its budget met (2 calls per job)
    assert (by[calls, plain].value, by[calls, plain].shown_met) == (2.0, "yes")
    assert by[calls, plain].baseline_value is None
    # AND the cancel's rows name the uncontrolled value as their baseline, per job
    assert (by[calls, cancel].value, by[calls, cancel].baseline_value, by[calls, cancel].ratio) == (
        2.0,
        2.0,
        1.0,
    )
    assert (by[reads, cancel].value, by[writes, cancel].value) == (0.0, 2.0)
    assert by[sqs, cancel].value == pytest.approx(0.1)
    assert by[calls, cancel].target is None
    assert by[calls, cancel].note.startswith("per job, 10 measured; PutItem 20")

    # WHEN figure 9's section is written from them
    results = Results(command="test", parameters={}, machine={}, rows=rows)
    markdown = "\n".join(cost_section(results))
    # THEN it has the controls' table: one line a case, each value with its uncontrolled one
    assert "### What the controls cost" in markdown
    assert (
        f"| {cancel} | claim | per job | 2.00 (2.00) | 0.00 (0.00) | 2.00 (2.00) | 0.10 (0.10) |" in markdown
    )
    assert f"| {plain} | claim | per job | 2.00, = 2: yes |" in markdown


def test_a_paced_delivery_that_waits_returns_its_records_as_expected_and_is_no_problem() -> None:
    # GIVEN the pace cases of claim mode (a paced job that runs, a delivery whose records all wait)
    paced = tuple(c for c in CONTROL_CASES if c.consumer == "claim" and c.control == "pace")
    problems: list[str] = []
    # WHEN their rows are measured
    rows = control_rows(problems, paced)
    # THEN the waiting records returned to the queue are what the case expects, not a failed run
    assert problems == []
    calls = CONTROL_MEASURES[0][0]
    assert [row.value for row in rows if row.measure == calls] == [pytest.approx(3.1), pytest.approx(0.2)]
