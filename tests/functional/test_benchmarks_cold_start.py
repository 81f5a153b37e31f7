"""The benchmark's cold-start measurement (figure 5): fresh interpreters, the import statement only."""

from __future__ import annotations

import pytest

from benchmarks.cold_start import import_seconds


def test_import_timing_runs_fresh_interpreters_and_names_a_failing_statement() -> None:
    # GIVEN / WHEN an import is timed twice
    timing = import_seconds("json", "import json", runs=2, bytecode=False)
    # THEN there are two positive timings; a statement that fails is named in the error
    assert len(timing.seconds) == 2
    assert all(seconds > 0 for seconds in timing.seconds)
    with pytest.raises(RuntimeError, match="no_such_module_xyz"):
        import_seconds("missing", "import no_such_module_xyz", runs=1)
