"""Pace a key: at most ``burst + jobs / period × T`` runs of one key start in any window of length ``T``.

The pure core (no boto3, no clock: ``now_ms`` is passed in) of the pacing the runtime applies before a
job's claim (claim mode) or before a group's transitions are applied (state mode), for a queue with a
``pace`` limit only (docs/steering.md, "Pace a key"). Its I/O is :mod:`.pace_store`.

The bucket is a **GCRA** (the generic cell rate algorithm, a token bucket kept as one number): its
*theoretical arrival time* ``tat_ms``. With the emission interval ``I = ceil(period / jobs)`` and the
tolerance ``tau = (burst - 1) × I``:

1. ``k`` tokens conform at ``now`` when ``max(tat, now) + (k - 1) × I <= now + tau``; taking them sets
   ``tat = max(tat, now) + k × I``. An absent bucket is a full one (``tat <= now``).
2. **Never faster than the limit.** Of any ``n`` takes in the order the item took them, the last is at
   least ``(n - burst) × I`` after the first (each take moves ``tat`` by ``I`` and conforms only within
   ``tau`` of it), so a window of length ``T`` holds at most ``burst + T / I <= burst + jobs × T / period``
   takes. ``I`` is rounded **up** to a whole millisecond, so rounding only slows the key.
3. **Clocks.** ``now`` is the taker's clock. Takers whose clocks are within ``skew`` of true time
   stamp their takes within ``skew`` of it, so a true window of length ``T`` holds at most
   ``burst + jobs × (T + 2 × skew) / period`` takes: a skew of ``δ`` lends at most ``2δ`` worth of tokens.
4. **Over the limit**, the next token is due at ``tat - tau``: the job waits until then, in its place.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.runtime.exceptions import ConfigurationError
from constructs_fifo.runtime.settings.spec import SETTINGS

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.types import SQSRecord

__all__ = [
    "KEY_GROUP",
    "MAX_PACE_JOBS",
    "MAX_PACE_PERIOD_SECONDS",
    "PaceGrant",
    "PaceLimit",
    "grant",
    "pace_key_of",
    "wait_seconds",
]

#: The key that paces each group on its own (the record's ``MessageGroupId``).
KEY_GROUP: Final = "group"
#: A key read from a message attribute: ``attribute:<name>`` (its ``stringValue``).
KEY_ATTRIBUTE_PREFIX: Final = "attribute:"
#: A key read from the job's body: ``body:<dotted.path>`` (``body:payload.tenant``).
KEY_BODY_PREFIX: Final = "body:"
#: The most jobs one period may allow (and the largest burst): a limit this high is no pace.
MAX_PACE_JOBS: Final = 100_000
#: The longest period: one day.
MAX_PACE_PERIOD_SECONDS: Final = 86_400


@dataclass(frozen=True)
class PaceLimit:
    """A limit of ``jobs`` runs per ``period_seconds`` for each value of ``key``, with a ``burst``.

    Attributes
    ----------
    jobs : int
        Runs allowed per period, on average.
    period_seconds : int
        The period, in whole seconds.
    burst : int
        Runs that may start at once on a key that was idle (at least 1).
    key : str
        ``group`` (each group paced alone), ``attribute:<name>`` or ``body:<dotted.path>`` (a key that
        spans groups, such as the tenant).

    Examples
    --------
    >>> limit = PaceLimit(jobs=60, period_seconds=60, burst=5, key="body:payload.tenant")
    >>> limit.interval_ms, limit.tolerance_ms
    (1000, 4000)
    >>> PaceLimit.from_env(limit.to_env()) == limit
    True
    """

    jobs: int
    period_seconds: int
    burst: int
    key: str = KEY_GROUP

    @property
    def interval_ms(self) -> int:
        """The emission interval ``I``: the period over the jobs, rounded up to a millisecond."""
        return math.ceil(self.period_seconds * 1000 / self.jobs)

    @property
    def tolerance_ms(self) -> int:
        """``tau = (burst - 1) × I``: how far ahead of ``now`` the bucket's ``tat`` may be and still give."""
        return (self.burst - 1) * self.interval_ms

    def problems(self) -> list[str]:
        """What is wrong with this limit, as sentences (empty: valid)."""
        found = []
        if not 1 <= self.jobs <= MAX_PACE_JOBS:
            found.append(f"jobs={self.jobs}: must be a whole number from 1 to {MAX_PACE_JOBS}")
        if not 1 <= self.period_seconds <= MAX_PACE_PERIOD_SECONDS:
            found.append(
                f"period={self.period_seconds} s: must be from 1 second to {MAX_PACE_PERIOD_SECONDS} seconds"
            )
        if not 1 <= self.burst <= MAX_PACE_JOBS:
            found.append(f"burst={self.burst}: must be a whole number from 1 to {MAX_PACE_JOBS}")
        found.extend(key_problems(self.key))
        return found

    def to_env(self) -> str:
        """The limit as its environment variable's value (compact JSON)."""
        return json.dumps(
            {"jobs": self.jobs, "periodSeconds": self.period_seconds, "burst": self.burst, "key": self.key},
            separators=(",", ":"),
        )

    @classmethod
    def from_env(cls, text: str) -> PaceLimit:
        """Read a limit written by :meth:`to_env`.

        Raises
        ------
        ConfigurationError
            Not such JSON, or a value out of its range (the message names the variable and the fix).
        """
        variable = SETTINGS["pace"].variable()
        try:
            raw: Any = json.loads(text)
            limit = cls(
                jobs=_whole(raw["jobs"]),
                period_seconds=_whole(raw["periodSeconds"]),
                burst=_whole(raw["burst"]),
                key=str(raw["key"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(
                f"{variable}={text!r}: not a pace limit ({exc}); set OrderedAgentQueue's pace prop "
                "(Pace(jobs=..., per=Duration...)) or unset the variable"
            ) from None
        if problems := limit.problems():
            raise ConfigurationError(
                f"{variable}={text!r}: {'; '.join(problems)}; set OrderedAgentQueue's pace prop"
            )
        return limit


def key_problems(key: str) -> list[str]:
    """What is wrong with a pace key (empty: valid)."""
    if key == KEY_GROUP:
        return []
    for prefix in (KEY_ATTRIBUTE_PREFIX, KEY_BODY_PREFIX):
        if key.startswith(prefix):
            rest = key[len(prefix) :]
            if rest and all(rest.split(".")):
                return []
    return [
        f"key={key!r}: must be 'group', 'attribute:<name>' or 'body:<dotted.path>' "
        "(for example 'body:payload.tenant')"
    ]


def _whole(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not a whole number")
    return value


def pace_key_of(key: str, record: SQSRecord, body: object) -> str | None:
    """The value of ``key`` for one record (``None``: the record has none, and is not paced).

    ``body`` is the record's decoded body (the job envelope). A number or a string is a key value;
    anything else (absent, an object, a list) is none.

    Examples
    --------
    >>> record = {"attributes": {"MessageGroupId": "ws#1"}, "messageAttributes": {}}
    >>> body = {"payload": {"tenant": 7}}
    >>> pace_key_of("group", record, body), pace_key_of("body:payload.tenant", record, body)
    ('ws#1', '7')
    """
    if key == KEY_GROUP:
        return str(record.get("attributes", {}).get("MessageGroupId", "")) or None
    if key.startswith(KEY_ATTRIBUTE_PREFIX):
        attributes: Any = record.get("messageAttributes") or {}
        found = (attributes.get(key[len(KEY_ATTRIBUTE_PREFIX) :]) or {}).get("stringValue")
        return str(found) if isinstance(found, str) and found else None
    value: Any = body
    for part in key[len(KEY_BODY_PREFIX) :].split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value == "":
        return None
    return str(value)


@dataclass(frozen=True)
class PaceGrant:
    """What a take of ``want`` tokens at ``now_ms`` gives.

    Attributes
    ----------
    granted : int
        Tokens taken (0 to ``want``): that many jobs may start now, the first ones in order.
    tat_ms : int or None
        The bucket's ``tat`` after the take (``None``: nothing taken, the bucket unchanged).
    due_ms : int
        When the next token is due (``granted < want``); ``now_ms`` when every token was granted.
    """

    granted: int
    tat_ms: int | None
    due_ms: int


def grant(limit: PaceLimit, tat_ms: int | None, now_ms: int, want: int) -> PaceGrant:
    """Rule 1: take up to ``want`` tokens from a bucket at ``tat_ms`` (``None``: absent, full) at ``now_ms``.

    Examples
    --------
    >>> limit = PaceLimit(jobs=1, period_seconds=1, burst=2)
    >>> grant(limit, None, 0, 3)
    PaceGrant(granted=2, tat_ms=2000, due_ms=1000)
    >>> grant(limit, 2000, 500, 1)
    PaceGrant(granted=0, tat_ms=None, due_ms=1000)
    """
    base = now_ms if tat_ms is None else max(tat_ms, now_ms)
    room = now_ms + limit.tolerance_ms - base  # how far past ``base`` the last token may be
    available = 0 if room < 0 else room // limit.interval_ms + 1
    granted = max(0, min(want, available))
    tat = base + granted * limit.interval_ms if granted else None
    due = now_ms if granted == want else (tat if tat is not None else base) - limit.tolerance_ms
    return PaceGrant(granted=granted, tat_ms=tat, due_ms=max(due, now_ms))


def wait_seconds(due_ms: int, now_ms: int, cap_seconds: int) -> int:
    """Rule 4: how long a paced record waits: until its token is due, in whole seconds rounded up, at
    least 1 and at most ``cap_seconds`` (the visibility cap: a longer wait comes back and waits again).

    >>> wait_seconds(2_500, 1_000, 900), wait_seconds(1_000, 1_000, 900), wait_seconds(10**9, 0, 900)
    (2, 1, 900)
    """
    return max(1, min(cap_seconds, math.ceil((due_ms - now_ms) / 1000)))
