"""The pace limit's pure core: the GCRA bucket's grants, its window bound, keys and the limit's codec."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.steering.pace import PaceLimit, grant, pace_key_of, wait_seconds


def _record(group: str = "ws#1", **attributes: str) -> dict[str, object]:
    return {
        "attributes": {"MessageGroupId": group},
        "messageAttributes": {
            name: {"stringValue": value, "dataType": "String"} for name, value in attributes.items()
        },
    }


def test_an_idle_key_gives_its_burst_at_once_then_one_token_per_interval() -> None:
    # GIVEN 6 jobs a minute with a burst of 3, and no bucket yet
    limit = PaceLimit(jobs=6, period_seconds=60, burst=3)
    # WHEN 5 tokens are asked for at once
    first = grant(limit, None, 0, 5)
    # THEN the burst is granted, and the next token is due one interval (10 s) after the bucket refills
    assert (first.granted, first.tat_ms, first.due_ms) == (3, 30_000, 10_000)
    # AND nothing more before then; one at the due time
    assert grant(limit, first.tat_ms, 9_999, 1).granted == 0
    assert grant(limit, first.tat_ms, 10_000, 1).granted == 1


def test_a_key_idle_for_long_gives_no_more_than_its_burst() -> None:
    # GIVEN a bucket last used long ago
    limit = PaceLimit(jobs=1, period_seconds=1, burst=2)
    # WHEN many tokens are asked for an hour later
    taken = grant(limit, 1_000, 3_600_000, 100)
    # THEN idle time is not banked past the burst
    assert taken.granted == 2


def test_the_interval_is_rounded_up_so_rounding_only_slows_a_key() -> None:
    # GIVEN 3 jobs per second: 333.33 ms apart
    limit = PaceLimit(jobs=3, period_seconds=1, burst=1)
    # THEN the bucket spaces them 334 ms apart
    assert limit.interval_ms == 334


@settings(max_examples=200, deadline=None)
@given(
    jobs=st.integers(1, 20),
    period=st.integers(1, 120),
    burst=st.integers(1, 10),
    asks=st.lists(st.tuples(st.integers(0, 5_000), st.integers(1, 4)), min_size=1, max_size=40),
)
def test_over_any_window_no_more_than_burst_plus_rate_times_its_length_are_granted(
    jobs: int, period: int, burst: int, asks: list[tuple[int, int]]
) -> None:
    # GIVEN a limit and asks at increasing times, each for a few tokens
    limit = PaceLimit(jobs=jobs, period_seconds=period, burst=burst)
    tat: int | None = None
    now = 0
    starts: list[int] = []
    for gap_ms, want in asks:
        now += gap_ms
        # WHEN each ask takes what the bucket grants
        taken = grant(limit, tat, now, want)
        if taken.granted:
            tat = taken.tat_ms
        starts += [now] * taken.granted
        # AND a partial or empty grant names a due time in the future, when a token is free
        if taken.granted < want:
            assert taken.due_ms > now
            assert grant(limit, tat, taken.due_ms, 1).granted == 1
    # THEN every window [t_i, t_j] holds at most burst + rate x its length of the grants
    rate_per_ms = jobs / (period * 1000)
    for i, first in enumerate(starts):
        for j in range(i, len(starts)):
            assert j - i + 1 <= burst + rate_per_ms * (starts[j] - first) + 1e-9


def test_a_key_is_the_group_a_message_attribute_or_a_path_of_the_body() -> None:
    # GIVEN a record of group ws#1 with a tenant attribute, and a body naming a tenant
    record = _record("ws#1", tenant="acme")
    body = {"payload": {"tenant": "t-7", "nested": {"n": 3}}, "flag": True}
    # THEN each kind of key reads its value; a missing or non-scalar value is no key (not paced)
    assert pace_key_of("group", record, body) == "ws#1"  # type: ignore[arg-type]
    assert pace_key_of("attribute:tenant", record, body) == "acme"  # type: ignore[arg-type]
    assert pace_key_of("attribute:other", record, body) is None  # type: ignore[arg-type]
    assert pace_key_of("body:payload.tenant", record, body) == "t-7"  # type: ignore[arg-type]
    assert pace_key_of("body:payload.nested.n", record, body) == "3"  # type: ignore[arg-type]
    assert pace_key_of("body:payload.nested", record, body) is None  # type: ignore[arg-type]
    assert pace_key_of("body:flag", record, body) is None  # type: ignore[arg-type]
    assert pace_key_of("body:payload.tenant", record, "not json") is None  # type: ignore[arg-type]


def test_a_limit_travels_through_its_variable_and_a_wrong_one_names_the_variable_and_the_fix() -> None:
    # GIVEN a valid limit
    limit = PaceLimit(jobs=10, period_seconds=60, burst=5, key="body:payload.tenant")
    # THEN its variable reads back as itself
    assert PaceLimit.from_env(limit.to_env()) == limit
    # AND a wrong value says every problem, the variable and the prop to set
    with pytest.raises(ConfigurationError) as error:
        PaceLimit.from_env('{"jobs":0,"periodSeconds":0,"burst":1,"key":"tenant"}')
    text = str(error.value)
    assert (
        "CONSTRUCTS_FIFO_PACE" in text and "jobs=0" in text and "period=0" in text and "key='tenant'" in text
    )
    assert "pace prop" in text
    with pytest.raises(ConfigurationError, match="not a pace limit"):
        PaceLimit.from_env("10/min")


def test_a_paced_record_waits_until_its_token_is_due_within_the_visibility_cap() -> None:
    # THEN the wait is rounded up to a second, at least 1 s, at most the cap
    assert wait_seconds(due_ms=10_001, now_ms=0, cap_seconds=900) == 11
    assert wait_seconds(due_ms=0, now_ms=0, cap_seconds=900) == 1
    assert wait_seconds(due_ms=10**9, now_ms=0, cap_seconds=900) == 900
