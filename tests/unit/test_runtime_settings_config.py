"""Unit tests of RuntimeConfig: environment, explicit arguments, defaults and errors."""

from __future__ import annotations

import pytest

from constructs_fifo.runtime.constants import DeadJobPolicy, JobMode
from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.settings.config import RuntimeConfig

BASE = {
    "CONSTRUCTS_FIFO_CLAIM_TABLE": "claims",
    "CONSTRUCTS_FIFO_QUEUE_URL": "https://q/jobs.fifo",
    "CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL": "https://q/jobs-dlq.fifo",
    "CONSTRUCTS_FIFO_GROUP_TABLE": "groups",
}


def test_reads_the_environment_the_construct_writes() -> None:
    # GIVEN every variable set
    env = {
        **BASE,
        "CONSTRUCTS_FIFO_HANDLER": "agent_worker.handle",
        "CONSTRUCTS_FIFO_VISIBILITY_TIMEOUT_SECONDS": "720",
        "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS": "3",
        "CONSTRUCTS_FIFO_CLAIM_TTL_SECONDS": "86400",
        "CONSTRUCTS_FIFO_METRICS_NAMESPACE": "Agents",
        "CONSTRUCTS_FIFO_MAX_ATTEMPTS": "7",
        "CONSTRUCTS_FIFO_ON_DEAD_JOB": "continue",
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
        dead_letter_queue_url="https://q/jobs-dlq.fifo",
        max_attempts=7,
        on_dead_job=DeadJobPolicy.CONTINUE,
        group_table="groups",
    )


def test_defaults_apply_when_optional_variables_are_unset() -> None:
    config = RuntimeConfig.from_env(BASE)
    assert (config.user_handler, config.visibility_timeout_seconds, config.backoff_base_seconds) == (
        None,
        43200,
        2,
    )
    assert (config.claim_ttl_seconds, config.metrics_namespace) == (604800, "ConstructsFifo")
    assert (config.max_attempts, config.on_dead_job) == (5, DeadJobPolicy.PARK)


def test_the_park_policy_needs_the_group_table() -> None:
    # GIVEN the default policy (PARK) and no group table
    env = {k: v for k, v in BASE.items() if k != "CONSTRUCTS_FIFO_GROUP_TABLE"}
    # WHEN / THEN the error names the variable and why it is needed
    with pytest.raises(ConfigurationError, match="CONSTRUCTS_FIFO_GROUP_TABLE='': the group table's name"):
        RuntimeConfig.from_env(env)
    # AND the CONTINUE policy does without it
    assert RuntimeConfig.from_env({**env, "CONSTRUCTS_FIFO_ON_DEAD_JOB": "CONTINUE"}).group_table is None


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "CONSTRUCTS_FIFO_ON_DEAD_JOB",
            "stop",
            "CONSTRUCTS_FIFO_ON_DEAD_JOB='stop': must be PARK or CONTINUE; set OrderedAgentQueue's "
            "on_dead_job prop or unset it to use the default PARK",
        ),
        (
            "CONSTRUCTS_FIFO_MAX_ATTEMPTS",
            "0",
            "CONSTRUCTS_FIFO_MAX_ATTEMPTS='0' (variable): must be a whole number from 1 to 100 of attempts; "
            "fix the value or unset it to use the default 5",
        ),
    ],
)
def test_a_bad_policy_or_attempt_count_names_the_variable_and_the_fix(
    variable: str, value: str, message: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        RuntimeConfig.from_env({**BASE, variable: value})
    assert str(raised.value) == message


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
            "CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS='two' (variable): must be a whole number from 1 to "
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
    with pytest.raises(ConfigurationError, match=r"=-1 \(argument\): must be a whole number from 1"):
        RuntimeConfig.from_env(BASE, backoff_base_seconds=-1)


def test_a_boolean_argument_is_not_taken_for_a_number() -> None:
    # GIVEN / WHEN True is passed where seconds are expected / THEN it is refused, not read as 1
    with pytest.raises(ConfigurationError, match=r"=True \(argument\): must be a whole number from 1"):
        RuntimeConfig.from_env(BASE, backoff_base_seconds=True)


def test_state_mode_needs_the_group_table_but_no_claim_table() -> None:
    # GIVEN state mode under CONTINUE, without a claim table
    env = {k: v for k, v in BASE.items() if k != "CONSTRUCTS_FIFO_CLAIM_TABLE"}
    env |= {"CONSTRUCTS_FIFO_MODE": "state", "CONSTRUCTS_FIFO_ON_DEAD_JOB": "CONTINUE"}
    # WHEN read THEN the mode and the state settings' defaults apply
    config = RuntimeConfig.from_env(env)
    assert (config.mode, config.claim_table, config.group_table) == (JobMode.STATE, "", "groups")
    assert (config.reorder_limit, config.gap_timeout_seconds, config.gap_policy) == (100, 300, "WAIT")
    # AND without the group table the error names it
    del env["CONSTRUCTS_FIFO_GROUP_TABLE"]
    with pytest.raises(ConfigurationError, match="CONSTRUCTS_FIFO_GROUP_TABLE='': the group table's name"):
        RuntimeConfig.from_env(env)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "CONSTRUCTS_FIFO_MODE",
            "events",
            "CONSTRUCTS_FIFO_MODE='events': must be CLAIM or STATE; set OrderedAgentQueue's mode prop or "
            "unset it to use the default CLAIM",
        ),
        (
            "CONSTRUCTS_FIFO_GAP_POLICY",
            "drop",
            "CONSTRUCTS_FIFO_GAP_POLICY='drop': must be WAIT or SKIP_GAP; set OrderedAgentQueue's gap_policy "
            "prop or unset it to use the default WAIT",
        ),
    ],
)
def test_a_bad_mode_or_gap_policy_names_the_variable_and_the_fix(
    variable: str, value: str, message: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        RuntimeConfig.from_env({**BASE, variable: value})
    assert str(raised.value) == message


def test_the_max_job_duration_is_read_in_seconds_and_unset_by_default() -> None:
    # GIVEN no variable / THEN no bound of the runtime's own (the consumer's own bound applies)
    assert RuntimeConfig.from_env(BASE).max_job_duration_seconds is None
    assert RuntimeConfig(claim_table="c", queue_url="q").max_job_duration_seconds is None
    # WHEN the construct wrote one / THEN it is carried in seconds
    env = {**BASE, "CONSTRUCTS_FIFO_MAX_JOB_DURATION_SECONDS": "600"}
    assert RuntimeConfig.from_env(env).max_job_duration_seconds == 600


@pytest.mark.parametrize("value", ["0", "43201", "ten"])
def test_a_max_job_duration_outside_1_second_to_12_hours_is_refused(value: str) -> None:
    # GIVEN a bound outside SQS's visibility cap / WHEN read / THEN the variable, rule and fix are named
    with pytest.raises(ConfigurationError) as raised:
        RuntimeConfig.from_env({**BASE, "CONSTRUCTS_FIFO_MAX_JOB_DURATION_SECONDS": value})
    assert str(raised.value) == (
        f"CONSTRUCTS_FIFO_MAX_JOB_DURATION_SECONDS={value!r} (variable): must be a whole number from 1 to "
        "43200 of seconds; fix the value or unset it to use the consumer's own bound"
    )
