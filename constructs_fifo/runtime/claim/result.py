"""A job's return value on its SUCCEEDED claim: the ``result`` attribute's one codec.

Claim mode stores what the job function returned with the claim that says it succeeded, in the same
fenced UpdateItem (:meth:`~constructs_fifo.runtime.claim.store.ClaimStore.complete`), so a caller
waiting on the job (:class:`constructs_fifo.client.outcomes.JobOutcomes`) reads the outcome and the
value in one consistent GetItem. The value is compact JSON in a string attribute; a claim without it
(the job returned ``None``, the value was not stored, or a runtime before this one wrote it) reads as
``None``. A value not stored is never silent: the claim's ``result_not_stored`` says why (not JSON, too
large), and the waiter's outcome carries it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from constructs_fifo.runtime.constants import ATTR_RESULT, ATTR_RESULT_NOT_STORED, MAX_RESULT_BYTES

__all__ = ["encode_result", "offload_result", "result_not_stored", "stored_result"]

#: How the reason of a value too large for the claim starts (``offload_result`` puts those).
_TOO_LARGE: Final = "the return value is "


def encode_result(value: object) -> tuple[str | None, str | None]:
    """A job's return value as its claim stores it: ``(json, None)``, or ``(None, why not)``.

    ``None`` is stored as nothing (no attribute, the claim's old layout). A value that is not JSON, or
    whose compact JSON passes ``MAX_RESULT_BYTES``, is not stored either and the reason says why: the
    job's effect happened, so it still succeeds (the caller logs the reason).

    Examples
    --------
    >>> encode_result({"passed": True})
    ('{"passed":true}', None)
    >>> encode_result(None)
    (None, None)
    >>> encode_result({1, 2})[1]
    'the return value is not JSON (TypeError: Object of type set is not JSON serializable)'
    """
    if value is None:
        return None, None
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        return None, f"the return value is not JSON ({type(exc).__name__}: {exc})"
    size = len(text.encode("utf-8"))
    if size > MAX_RESULT_BYTES:
        return None, f"{_TOO_LARGE}{size} bytes of JSON, more than the {MAX_RESULT_BYTES} stored"
    return text, None


def offload_result(
    value: object, put_large: Callable[[str], str | None]
) -> tuple[str | None, str | None, str | None]:
    """:func:`encode_result`, with a value too large for the claim put by ``put_large`` (the payload
    bucket's: its pointer body, or ``None`` without a bucket): ``(json, why not, pointer)``.

    A failed put leaves the value not stored, and the reason says why (the job's effect happened).
    """
    text, why = encode_result(value)
    if why is None or not why.startswith(_TOO_LARGE) or "not JSON" in why:
        return text, why, None
    large = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        pointer = put_large(large)
    except Exception as exc:  # the job succeeded: its value is lost, not its outcome
        return None, f"{why}; putting it in the payload bucket failed ({type(exc).__name__}: {exc})", None
    return (None, None, pointer) if pointer is not None else (None, why, None)


def stored_result(item: dict[str, Any]) -> Any:
    """The return value a decoded claim item holds (``None`` when it holds none: an older item too)."""
    text = item.get(ATTR_RESULT)
    return json.loads(text) if isinstance(text, str) else None


def result_not_stored(item: dict[str, Any]) -> str | None:
    """Why a SUCCEEDED claim holds no return value though the job returned one (``None``: it holds it,
    or the job returned ``None``)."""
    why = item.get(ATTR_RESULT_NOT_STORED)
    return why if isinstance(why, str) and why else None
