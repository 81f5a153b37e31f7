"""The rules on state mode's values: what a job's ``seq`` may be (:func:`job_seq`), what a state may hold
(:func:`encode_state`), and the compact JSON the bookkeeping is written in (:func:`compact_json`).

Pure, without I/O; :mod:`constructs_fifo.runtime.state.core.records` holds the records these values go into.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from constructs_fifo.runtime.exceptions import MalformedJobError, TransitionResultError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.job import Job

__all__ = ["compact_json", "encode_state", "job_seq"]


def compact_json(value: object) -> str:
    """``value`` as compact JSON (no spaces, non-ASCII kept): the bookkeeping's encoding."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def job_seq(job: Job) -> int | None:
    """Return the job's ``seq`` (the body's ``"seq"``), or ``None`` when it has none.

    Raises
    ------
    MalformedJobError
        ``seq`` is present but not a non-negative integer (``true``, ``1.0`` and ``"1"`` are refused).

    Examples
    --------
    >>> from constructs_fifo.runtime.job import Job
    >>> job = Job("j1", "ws#1", "apply_patch", {}, 1, "m1", {"jobId": "j1", "seq": 7})
    >>> job_seq(job)
    7
    """
    value = job.body.get("seq")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedJobError(
            f"message {job.message_id} (jobId {job.id!r}): seq is {value!r}; it must be a non-negative "
            "integer (the producer's sequence number within the group, e.g. an aggregate's version) or "
            "be left out",
            job_id=job.id,
        )
    return value


def encode_state(state: object) -> str:
    """Encode a transition's result as the compact JSON the item stores.

    Raises
    ------
    TransitionResultError
        ``state`` is not a dict with string keys whose values are JSON (dict, list, str, int,
        finite float, bool, None); the message names the type and where it is.
    """
    if not isinstance(state, dict):
        raise TransitionResultError(
            f"the transition returned a {type(state).__name__}; it must return the group's next state "
            "as a dict (a JSON object)"
        )
    _check_json(state, "state")
    text = json.dumps(state, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TransitionResultError(f"the state holds a string that is not valid UTF-8 ({exc})") from None
    return text


def _check_json(value: object, path: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TransitionResultError(
                    f"{path} has the key {key!r} ({type(key).__name__}); JSON object keys must be strings"
                )
            _check_json(item, f"{path}[{key!r}]")
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _check_json(item, f"{path}[{position}]")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise TransitionResultError(f"{path} is {value!r}; JSON has no NaN or infinity")
    elif value is not None and not isinstance(value, str | int):  # bool is an int
        raise TransitionResultError(
            f"{path} is a {type(value).__name__}; a state holds only JSON values (dict, list, str, int, "
            "float, bool, None): convert it, e.g. a tuple to a list, a set to a sorted list, a datetime "
            "to an ISO string"
        )
