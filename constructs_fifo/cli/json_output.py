"""One ``--json`` convention for every command: camelCase keys; a time as ISO 8601 with its epoch beside.

Every command's ``--json`` document goes through :func:`print_json` (or :func:`json_document`, to
convert without printing), so a script reads every command the same way:

* **Keys are camelCase.** A ``snake_case`` key (``lease_expires_at``, a claim's attribute) and a
  ``PascalCase`` one (``Checks``, an AWS response's ``Status``) are converted; a key that is not an
  identifier (a queue label ``AgentJobs/Workspaces``, an AWS call ``sqs.ReceiveMessage``, a group
  ``ws#42``) is a name, left as it is. Values the user owns (a group's state, a job's body, a map
  keyed by job id, a stack's outputs by their names) are wrapped in :class:`Verbatim` by the command
  and printed untouched.
* **A point in time is ISO 8601 UTC, its epoch milliseconds beside it.** A key named as a time
  (ending in ``At``, ``AtMs``, ``SinceMs``, or ``at``/``atMs`` alone, in any casing) whose value is
  epoch milliseconds or an ISO string becomes two keys: ``claimedAt`` (``"2026-12-01T20:00:00Z"``)
  and ``claimedAtEpochMs`` (``1764619200000``); ``gapOpenSinceMs`` becomes ``gapOpenSince`` and
  ``gapOpenSinceEpochMs``. A duration keeps its unit in its name (``leaseRemainingSeconds``,
  ``elapsedSeconds``) and is a number.

The module imports nothing of the project, so any command (``doctor``, ``drain``, ``deploy``) can
call it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["Verbatim", "camel_case", "iso_time", "json_document", "print_json"]

_SNAKE: Final = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_PASCAL: Final = re.compile(r"[A-Z][A-Za-z0-9]*")
#: A camelCase key naming a point in time, and the stem its two keys are built on.
_TIME_KEY: Final = re.compile(r"(?P<stem>(?:.*At|at|.*Since))(?:Ms)?")
#: Epoch values below this are not milliseconds of this century (0 is "never"/"unknown").
_MIN_EPOCH_MS: Final = 10**11


@dataclass(frozen=True)
class Verbatim:
    """A value printed as it is: its keys are names the user chose (a state, a body, ids)."""

    value: Any


def camel_case(key: str) -> str:
    """``lease_expires_at`` -> ``leaseExpiresAt``, ``Checks`` -> ``checks``; a name stays as it is."""
    if _SNAKE.fullmatch(key):
        first, *rest = key.split("_")
        return first + "".join(part[:1].upper() + part[1:] for part in rest)
    if _PASCAL.fullmatch(key):
        if key.isupper():  # an acronym alone: ``ARN`` -> ``arn``
            return key.lower()
        return key[:1].lower() + key[1:]
    return key


def iso_time(epoch_ms: float) -> str:
    """Epoch milliseconds as ISO 8601 UTC with a ``Z``: ``2026-12-01T20:00:00Z`` (milliseconds when set)."""
    moment = dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.UTC)
    spec = "milliseconds" if moment.microsecond else "seconds"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


def _epoch_ms(value: object) -> int | None:
    """The epoch milliseconds of a time value (a number or an ISO string), ``None`` for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if value >= _MIN_EPOCH_MS else None
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return int(moment.timestamp() * 1000)
    return None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _convert_pairs(items: Mapping[Any, Any]) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for raw_key, raw_value in items.items():
        key = camel_case(str(raw_key))
        value = json_document(raw_value)
        time_key = _TIME_KEY.fullmatch(key)
        epoch = _epoch_ms(value)
        if time_key is not None and (epoch is not None or value is None or _is_number(value)):
            stem = time_key.group("stem")
            converted[stem] = None if epoch is None else iso_time(epoch)
            converted[f"{stem}EpochMs"] = epoch if epoch is not None else value  # 0: never/unknown
            continue
        converted[key] = value
    return converted


def json_document(payload: Any) -> Any:
    """``payload`` under the convention (the module docstring): keys, times, :class:`Verbatim` unwrapped."""
    if isinstance(payload, Verbatim):
        return payload.value
    if isinstance(payload, Mapping):
        return _convert_pairs(payload)
    if isinstance(payload, list | tuple):
        return [json_document(item) for item in payload]
    return payload


def print_json(payload: Any) -> None:
    """Print ``payload`` as one JSON document under the convention (sorted keys, two-space indent)."""
    print(json.dumps(json_document(payload), indent=2, sort_keys=True, default=str))
