"""Unit tests of RuntimeConfig: environment, explicit arguments, defaults and errors."""

from __future__ import annotations

import pytest

from constructs_fifo.runtime.config import RuntimeConfig
from constructs_fifo.runtime.exceptions import ConfigurationError

BASE = {"CONSTRUCTS_FIFO_CLAIM_TABLE": "claims", "CONSTRUCTS_FIFO_QUEUE_URL": "https://q/jobs.fifo"}


def test_reads_the_environment_the_construct_writes() -> None:
    # GIVEN every variable set
    env = {
        **BASE,
        "CONSTRUCTS_FIFO_HANDLER": "agent_worker.handle",
        "CONSTRUCTS_FIFO_VISIBILITY_TIMEOUT_SECONDS": "720",
        "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS": "3",
        "CONSTRUCTS_FIFO_CLAIM_TTL_SECONDS": "86400",
        "CONSTRUCTS_FIFO_METRICS_NAMESPACE": "Agents",
    }
    # WHEN / THEN
    assert RuntimeConfig.from_env(env) == RuntimeConfig(
        claim_table="claims",
        queue_url="https://q/jobs.fifo",
        user_handler="agent_worker.handle",
        visibility_timeout_seconds=720,
        backoff_base_seconds=3,
        claim_ttl_seconds=86400,
        metrics_namespace="Agents",
    )


def test_defaults_apply_when_optional_variables_are_unset() -> None:
    config = RuntimeConfig.from_env(BASE)
    assert (config.user_handler, config.visibility_timeout_seconds, config.backoff_base_seconds) == (
        None,
        43200,
        2,
    )
    assert (config.claim_ttl_seconds, config.metrics_namespace) == (604800, "ConstructsFifo")


def test_explicit_arguments_beat_the_environment() -> None:
    env = {**BASE, "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS": "3"}
    config = RuntimeConfig.from_env(env, claim_table="other", backoff_base_seconds=7)
    assert (config.claim_table, config.backoff_base_seconds) == ("other", 7)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"CONSTRUCTS_FIFO_QUEUE_URL": "https://q"},
            "CONSTRUCTS_FIFO_CLAIM_TABLE='': the claim table's name is required and is empty or unset; "
            "set CONSTRUCTS_FIFO_CLAIM_TABLE in the function's environment (OrderedAgentQueue does) or "
            "pass it to RuntimeConfig.from_env()",
        ),
        (
            {"CONSTRUCTS_FIFO_CLAIM_TABLE": "claims", "CONSTRUCTS_FIFO_QUEUE_URL": "  "},
            "CONSTRUCTS_FIFO_QUEUE_URL='  ': the FIFO queue's URL is required and is empty or unset; set "
            "CONSTRUCTS_FIFO_QUEUE_URL in the function's environment (OrderedAgentQueue does) or pass it "
            "to RuntimeConfig.from_env()",
        ),
        (
            {**BASE, "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS": "two"},
            "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS='two' (variable): must be a whole number from 0 to "
            "43200 of seconds; fix the value or unset it to use the default 2",
        ),
        (
            {**BASE, "CONSTRUCTS_FIFO_VISIBILITY_TIMEOUT_SECONDS": "50000"},
            "CONSTRUCTS_FIFO_VISIBILITY_TIMEOUT_SECONDS='50000' (variable): must be a whole number from 0 "
            "to 43200 of seconds; fix the value or unset it to use the default 43200",
        ),
        (
            {**BASE, "CONSTRUCTS_FIFO_CLAIM_TTL_SECONDS": "0"},
            "CONSTRUCTS_FIFO_CLAIM_TTL_SECONDS='0' (variable): must be a whole number >= 1 of seconds; fix "
            "the value or unset it to use the default 604800",
        ),
    ],
)
def test_bad_environment_raises_naming_variable_value_rule_and_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        RuntimeConfig.from_env(env)
    assert str(caught.value) == message


def test_bad_explicit_argument_is_reported_as_an_argument() -> None:
    with pytest.raises(ConfigurationError, match=r"=-1 \(argument\): must be a whole number from 0"):
        RuntimeConfig.from_env(BASE, backoff_base_seconds=-1)


def test_a_boolean_argument_is_not_taken_for_a_number() -> None:
    # GIVEN / WHEN True is passed where seconds are expected / THEN it is refused, not read as 1
    with pytest.raises(ConfigurationError, match=r"=True \(argument\): must be a whole number from 0"):
        RuntimeConfig.from_env(BASE, backoff_base_seconds=True)
