"""The examples' job code: every example in its docstrings runs (the suite's ``--doctest-modules`` does
not reach examples/, whose apps synthesize when imported)."""

from __future__ import annotations

import doctest

import pytest

from .conftest import load_job_module


@pytest.mark.parametrize(
    ("example", "module"),
    [("agent_workspace", "workspace_store"), ("agent_workspace", "pipeline"), ("account_events", "ledger")],
)
def test_job_code_docstring_examples_pass(example: str, module: str) -> None:
    # GIVEN an example's job module WHEN its docstring examples run THEN none fails
    result = doctest.testmod(load_job_module(example, module))
    assert result.failed == 0
