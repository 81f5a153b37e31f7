"""The settings spec: one limit per setting, read the same by RuntimeConfig and BatchSettings.

The construct's side of the same rows is pinned in ``test_construct_checks_validation.py``; the docs'
side in ``test_construct_settings_props_table.py``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.settings.choices import GapPolicy
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.runtime.settings.spec import SECONDS, SETTINGS, Setting
from constructs_fifo.runtime.state.core.records import BatchSettings

BASE = {
    "CONSTRUCTS_FIFO_CLAIM_TABLE": "claims",
    "CONSTRUCTS_FIFO_QUEUE_URL": "https://q/jobs.fifo",
    "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL": "https://q/jobs-dlq.fifo",
    "CONSTRUCTS_FIFO_GROUP_TABLE": "groups",
}

#: Rows the runtime reads as a whole number from the environment, with at least one limit.
BOUNDED_VARIABLES = [
    row
    for row in SETTINGS.values()
    if row.env is not None and isinstance(row.default, int) and (row.low is not None or row.high is not None)
]


def _config_field(row: Setting, value: int) -> object:
    assert row.env is not None and row.field is not None
    return getattr(RuntimeConfig.from_env({**BASE, row.env: str(value)}), row.field)


def test_every_bounded_variable_is_one_of_the_known_settings() -> None:
    # GIVEN / THEN the rows RuntimeConfig checks by limits (so a new row is not left out silently)
    assert sorted(row.name for row in BOUNDED_VARIABLES) == [
        "backoff_base",
        "batch_size",
        "claim_ttl",
        "gap_timeout",
        "heartbeat_interval",
        "max_attempts",
        "reorder_limit",
        "slots",
        "visibility_timeout",
    ]


@pytest.mark.parametrize("row", BOUNDED_VARIABLES, ids=lambda row: row.name)
def test_runtime_config_accepts_exactly_the_rows_limits(row: Setting) -> None:
    # GIVEN a row's limits, WHEN its variable holds each limit / THEN the runtime takes it
    for limit in (row.low, row.high):
        if limit is not None:
            assert _config_field(row, limit) == limit
    # AND one past either limit is refused, naming the variable, the value and the row's rule
    for outside in ([row.low - 1] if row.low is not None else []) + ([row.high + 1] if row.high else []):
        with pytest.raises(ConfigurationError) as raised:
            _config_field(row, outside)
        assert str(raised.value).startswith(
            f"{row.env}='{outside}' (variable): must be {row.rule_text()} of {row.unit}; "
        )


@pytest.mark.parametrize("row", BOUNDED_VARIABLES, ids=lambda row: row.name)
def test_runtime_config_defaults_to_the_rows_default(row: Setting) -> None:
    # GIVEN no variable for the row / WHEN reading / THEN the row's default
    assert row.field is not None
    assert getattr(RuntimeConfig.from_env(BASE), row.field) == row.default


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"reorder_limit": 0}, "reorder_limit=0 must be a whole number from 1 to 1000"),
        ({"reorder_limit": 1001}, "reorder_limit=1001 must be a whole number from 1 to 1000"),
        ({"max_attempts": 101}, "max_attempts=101 must be a whole number from 1 to 100"),
        ({"gap_timeout_ms": 999}, "gap_timeout_ms=999 must be a whole number >= 1 of seconds, x 1000"),
        ({"first_seq": -1}, "first_seq=-1 must be a whole number >= 0"),
    ],
)
def test_batch_settings_refuse_what_the_construct_refuses(options: dict[str, int], problem: str) -> None:
    # GIVEN a state-mode setting outside its row's limits / WHEN building the engine's settings
    with pytest.raises(ValueError, match="invalid state-mode settings") as raised:
        BatchSettings(**{"max_attempts": 3, "park_on_dead": False, **options})  # type: ignore[arg-type]
    # THEN the message names the setting, its value and the row's rule
    assert problem in str(raised.value)


def test_batch_settings_take_the_rows_limits_themselves() -> None:
    # GIVEN each state-mode row's limits / WHEN building at them / THEN they are accepted
    reorder, gap, attempts = SETTINGS["reorder_limit"], SETTINGS["gap_timeout"], SETTINGS["max_attempts"]
    assert gap.unit == SECONDS and gap.low is not None
    for limit in (reorder.low, reorder.high):
        assert limit is not None
        settings = BatchSettings(
            max_attempts=attempts.high or 0,
            park_on_dead=True,
            reorder_limit=limit,
            gap_timeout_ms=gap.low * 1000,
        )
        assert settings.reorder_limit == limit


def test_every_row_is_named_once_and_says_where_it_is_given() -> None:
    # GIVEN the rows / THEN each has a doc line and a type, and a prop, a variable or a runtime field
    for name, row in SETTINGS.items():
        assert row.name == name and row.doc and row.type
        assert row.prop or row.env or row.field, name
    # AND no two rows share a prop or a variable
    props = [row.prop for row in SETTINGS.values() if row.prop]
    variables = [row.env for row in SETTINGS.values() if row.env]
    assert len(props) == len(set(props)) and len(variables) == len(set(variables))


def test_the_readme_states_the_effective_state_limit() -> None:
    # GIVEN the state engine's default size limit: the item limit less the bookkeeping's reserve
    limit = BatchSettings(max_attempts=1, park_on_dead=False).size_limit
    # THEN the README states that figure where state mode's limits are listed
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert f"at most {limit:,} bytes" in readme and "less a 32 KB reserve" in readme


def test_every_runtime_field_is_the_field_of_a_row_with_a_variable() -> None:
    # GIVEN RuntimeConfig's fields and the rows the runtime reads from its environment
    fields = [field.name for field in dataclasses.fields(RuntimeConfig)]
    read = [row.field for row in SETTINGS.values() if row.env is not None and row.field is not None]
    # THEN they are the same settings: a new row with a variable is read, a new field has a row
    assert sorted(fields) == sorted(read)


def test_each_runtime_field_defaults_to_its_rows_default() -> None:
    # GIVEN a config built in code with only the required values
    config = RuntimeConfig(claim_table="claims", queue_url="https://q/jobs.fifo")
    # THEN every field whose row has a default has it (and what is read without a variable is the same)
    from_env = RuntimeConfig.from_env(BASE)
    for row in SETTINGS.values():
        if row.env is not None and row.field is not None and row.default is not None:
            assert getattr(config, row.field) == row.default == getattr(from_env, row.field), row.name


def test_the_gap_policy_is_read_as_a_gap_policy() -> None:
    # GIVEN the gap policy's variable in lower case / WHEN read / THEN the runtime has the enum member
    config = RuntimeConfig.from_env({**BASE, "CONSTRUCTS_FIFO_GAP_POLICY": "skip_gap"})
    assert config.gap_policy is GapPolicy.SKIP_GAP


def test_an_explicit_value_that_is_no_setting_is_refused_with_the_fields() -> None:
    # GIVEN a misspelt setting / WHEN building / THEN the error names it and the settings there are
    with pytest.raises(TypeError, match=r"got reorder_limits: not a field of RuntimeConfig; pass one of"):
        RuntimeConfig.from_env(BASE, reorder_limits=5)
