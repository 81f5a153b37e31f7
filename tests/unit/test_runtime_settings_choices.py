"""The public enums: one definition each, shared by the package root, the constants, the rows and state
mode."""

from __future__ import annotations

import subprocess
import sys

import constructs_fifo
from constructs_fifo.runtime import constants
from constructs_fifo.runtime.settings import choices
from constructs_fifo.runtime.settings.spec import SETTINGS
from constructs_fifo.runtime.state.core import records


def test_each_public_enum_is_one_class_wherever_it_is_imported_from() -> None:
    # GIVEN the enums as the package root, the constants and state mode's records name them
    for name in choices.__all__:
        # THEN each is the one class of the choices module
        assert getattr(constructs_fifo, name) is getattr(constants, name) is getattr(choices, name)
    assert records.GapPolicy is choices.GapPolicy


def test_the_gap_policy_is_a_str_enum_whose_members_are_the_rows_choices() -> None:
    # GIVEN the gap policy row / THEN its choices and default are GapPolicy's members (environment values)
    row = SETTINGS["gap_policy"]
    assert row.choices == (choices.GapPolicy.WAIT, choices.GapPolicy.SKIP_GAP) == ("WAIT", "SKIP_GAP")
    assert row.default is choices.GapPolicy.WAIT is constants.DEFAULT_GAP_POLICY


def test_the_package_roots_enums_load_neither_state_mode_nor_the_cdk() -> None:
    # GIVEN a fresh interpreter / WHEN it takes every enum from the package root
    script = (
        "import sys, constructs_fifo\n"
        "from constructs_fifo import DeadJobPolicy, GapPolicy, JobMode, OutcomeLines\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.startswith('constructs_fifo.runtime.state') or m == 'aws_cdk'))"
    )
    loaded = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    # THEN neither state mode nor aws_cdk was imported for it
    assert loaded.stdout.strip() == "[]"
