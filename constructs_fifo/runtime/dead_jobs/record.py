"""Why a job died: the one typed record (:class:`DeadJob`) and its one codec.

Both modes write it down in several places, all from this record and through this codec: state
mode's bookkeeping (the group's dead entries, the entry it is parked at, the dead letters it owes),
a parked group's header (``ParkHeader.dead``, both modes), the dead-letter message's attributes
(:mod:`constructs_fifo.runtime.dead_jobs.letters`) and claim mode's DEAD claim (its ``dead_reason``).

The stored form is a JSON object with named fields (:func:`encode_dead_job`): ``jobId``,
``jobType``, ``reason``, ``errorType``, ``error``, ``attempts``, ``messageId``, ``at`` (epoch ms)
and ``seq`` (when the job had one). :func:`decode_dead_job` also reads every form written before
this one, so items already stored stay readable:

- the bookkeeping's positional list ``[jobId, messageId, reason, errorType, error, attempts, at,
  jobType, seq]`` (``deadWhy`` entries and the dead entry of each ``owed`` letter);
- the bookkeeping's ``park`` object, whose type is ``type``;
- a park header's ``dead`` object, whose time is ``parkedAt`` (no ``seq``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.error_text import cut_error

__all__ = ["DeadJob", "decode_dead_job", "encode_dead_job", "stored_reason"]


@dataclass(frozen=True)
class DeadJob:
    """Why a job died, as the dead-letter queue's attributes, a park header and the bookkeeping say.

    It holds no body: a dead letter adds the record's
    (:class:`~constructs_fifo.runtime.dead_jobs.letters.DeadLetter`).

    Attributes
    ----------
    job_id, job_type : str
        The job (``""`` when the body did not say: a malformed record).
    error_type : str
        The exception's class name, e.g. ``PermanentJobError``.
    error : str
        The exception's text (stored cut to 1024 characters).
    attempts : int
        Runs of the job (0 when it died without running: malformed, a ``seq`` conflict, a copy).
    message_id : str
        The ``messageId`` of the delivery it died in (or was buffered from).
    at_ms : int
        When it died (epoch ms).
    seq : int or None
        Its ``seq`` (state mode).
    reason : DeadReason
        ``MALFORMED`` (a body that is not a job envelope, a ``seq`` that is not a non-negative
        integer), ``PERMANENT`` (a ``PermanentJobError``; in state mode also a result that is not
        JSON, a state too large, a ``seq`` conflict), ``ATTEMPTS_EXHAUSTED`` (a failure or crash on
        the last attempt) or ``COPY_OF_DEAD_JOB`` (another copy of a job already dead).
    """

    job_id: str
    job_type: str
    error_type: str
    error: str
    attempts: int
    message_id: str
    at_ms: int
    seq: int | None = None
    reason: DeadReason = DeadReason.PERMANENT


def encode_dead_job(dead: DeadJob) -> dict[str, Any]:
    """The stored form of ``dead``: a JSON object with named fields (``seq`` only when set; the error
    cut to 1024 characters).

    Examples
    --------
    >>> dead = DeadJob("j-1", "apply_patch", "PermanentJobError", "no diff", 1, "m-1", 0)
    >>> encode_dead_job(dead)["reason"], decode_dead_job(encode_dead_job(dead)) == dead
    ('PERMANENT', True)
    """
    data: dict[str, Any] = {
        "jobId": dead.job_id,
        "jobType": dead.job_type,
        "reason": dead.reason.value,
        "errorType": dead.error_type,
        "error": cut_error(dead.error),
        "attempts": dead.attempts,
        "messageId": dead.message_id,
        "at": dead.at_ms,
    }
    if dead.seq is not None:
        data["seq"] = dead.seq
    return data


def decode_dead_job(data: Mapping[str, Any] | list[Any]) -> DeadJob:
    """The :class:`DeadJob` of any stored form (the named one, and those written before it).

    Raises
    ------
    ValueError
        Not one of those forms (a positional list of fewer than 9 fields, a missing field, a reason
        this runtime does not know).

    Examples
    --------
    >>> decode_dead_job(["j-1", "m-1", "PERMANENT", "PermanentJobError", "no diff", 1, 0, "t", 3]).seq
    3
    >>> decode_dead_job({"jobId": "j-1", "jobType": "t", "reason": "MALFORMED", "errorType": "E",
    ...     "error": "", "attempts": 0, "messageId": "m-1", "parkedAt": 5}).at_ms
    5
    """
    if isinstance(data, list):
        if len(data) < 9:
            raise ValueError(f"a dead job's positional form has 9 fields, not {len(data)}")
        job_id, message_id, reason, error_type, error, attempts, at_ms, job_type, seq = data[:9]
    else:
        try:
            job_id, message_id, error_type, error = (
                data["jobId"],
                data["messageId"],
                data["errorType"],
                data["error"],
            )
            job_type = data["jobType"] if "jobType" in data else data["type"]
            at_ms = data["at"] if "at" in data else data["parkedAt"]
            attempts, reason, seq = data["attempts"], data.get("reason"), data.get("seq")
        except KeyError as exc:
            raise ValueError(f"a dead job's stored form lacks {exc}") from exc
    return DeadJob(
        job_id=str(job_id or ""),
        job_type=str(job_type or ""),
        error_type=str(error_type or ""),
        error=str(error or ""),
        attempts=int(attempts or 0),
        message_id=str(message_id or ""),
        at_ms=int(at_ms or 0),
        seq=None if seq is None else int(seq),
        reason=DeadReason(reason) if reason is not None else DeadReason.PERMANENT,
    )


def stored_reason(value: object) -> DeadReason:
    """The reason a stored DEAD claim names (``PERMANENT`` for one written before reasons were kept,
    or naming a reason this runtime does not know).

    Examples
    --------
    >>> stored_reason("MALFORMED"), stored_reason(None)
    (<DeadReason.MALFORMED: 'MALFORMED'>, <DeadReason.PERMANENT: 'PERMANENT'>)
    """
    try:
        return DeadReason(str(value or DeadReason.PERMANENT.value))
    except ValueError:
        return DeadReason.PERMANENT
