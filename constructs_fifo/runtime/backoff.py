"""Retry backoff: how long a failed record stays invisible, and the one SQS call that sets it.

Without this, a failed record of a FIFO group comes back only after the queue's whole visibility
timeout (6 x the function timeout by default) and blocks its group all that time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from constructs_fifo.runtime.aws_limits import SQS_MAX_BATCH_ENTRIES, SQS_MAX_VISIBILITY_TIMEOUT_SECONDS
from constructs_fifo.runtime.error_text import describe

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

__all__ = [
    "Backoff",
    "VisibilityApplier",
    "VisibilityChange",
    "VisibilityChanger",
    "backoff_seconds",
    "lease_delay_seconds",
]


def backoff_seconds(attempt: int, *, base_seconds: int, cap_seconds: int) -> int:
    """Return the retry delay of a record: ``base * 2**(attempt - 1)``, capped.

    Parameters
    ----------
    attempt : int
        The record's ApproximateReceiveCount (values below 1 count as 1).
    base_seconds : int
        Delay after the first attempt.
    cap_seconds : int
        Upper bound, normally the queue's visibility timeout; never above SQS's maximum
        (:data:`~constructs_fifo.runtime.aws_limits.SQS_MAX_VISIBILITY_TIMEOUT_SECONDS`).

    Examples
    --------
    >>> [backoff_seconds(a, base_seconds=2, cap_seconds=60) for a in (1, 2, 3, 6, 7)]
    [2, 4, 8, 60, 60]
    """
    exponent = min(max(attempt, 1) - 1, 32)  # 2**32 s is far past any cap: no huge integers
    return min(max(base_seconds, 0) * (1 << exponent), _clamp_cap(cap_seconds))


@dataclass(frozen=True)
class Backoff:
    """A queue's retry delays: ``backoff(attempt)`` is :func:`backoff_seconds` with its base and cap.

    Examples
    --------
    >>> Backoff(base_seconds=2, cap_seconds=60)(3)
    8
    """

    base_seconds: int
    cap_seconds: int

    def __call__(self, attempt: int) -> int:
        """The retry delay after ``attempt`` runs."""
        return backoff_seconds(attempt, base_seconds=self.base_seconds, cap_seconds=self.cap_seconds)


def lease_delay_seconds(lease_expires_at_ms: int | None, now_ms: int, *, cap_seconds: int) -> int:
    """Return whole seconds until a lease expires (0 when unknown or past), capped like the backoff."""
    if lease_expires_at_ms is None:
        return 0
    return min(max(0, math.ceil((lease_expires_at_ms - now_ms) / 1000)), _clamp_cap(cap_seconds))


def _clamp_cap(cap_seconds: int) -> int:
    """Bring a cap into what SQS accepts as a visibility timeout: 0 to its maximum."""
    return max(0, min(cap_seconds, SQS_MAX_VISIBILITY_TIMEOUT_SECONDS))


@dataclass(frozen=True)
class VisibilityChange:
    """One record's new visibility timeout."""

    message_id: str
    receipt_handle: str
    seconds: int


class VisibilityApplier(Protocol):
    """What the processor needs to apply a batch's delays (:class:`VisibilityChanger` on SQS)."""

    def apply(self, changes: Sequence[VisibilityChange]) -> None:
        """Set each record's visibility; never raise."""
        ...


class VisibilityChanger:
    """Applies visibility changes with ChangeMessageVisibilityBatch; never raises.

    Parameters
    ----------
    client : SQSClient
        A boto3 SQS client (injected).
    queue_url : str
        The FIFO queue the records came from.
    on_error : Callable[[dict], None]
        Called with a JSON-ready description of each failure (the processor logs it).
    """

    def __init__(self, client: SQSClient, queue_url: str, *, on_error: Callable[[dict[str, Any]], None]):
        self._client = client
        self._queue_url = queue_url
        self._on_error = on_error

    def apply(self, changes: Sequence[VisibilityChange]) -> None:
        """Change the visibility of every record in ``changes`` (one call per 10 records)."""
        usable = [change for change in changes if change.receipt_handle]
        for start in range(0, len(usable), SQS_MAX_BATCH_ENTRIES):
            chunk = usable[start : start + SQS_MAX_BATCH_ENTRIES]
            entries = [
                {
                    "Id": str(index),
                    "ReceiptHandle": change.receipt_handle,
                    "VisibilityTimeout": change.seconds,
                }
                for index, change in enumerate(chunk)
            ]
            try:
                response = self._client.change_message_visibility_batch(
                    QueueUrl=self._queue_url,
                    Entries=entries,  # type: ignore[arg-type]
                )
            except Exception as exc:  # a visibility change is an optimisation: never fail the batch
                self._on_error(
                    {
                        "event": "visibility_change_failed",
                        "messageIds": [change.message_id for change in chunk],
                        "error": describe(exc),
                    }
                )
                continue
            for failed in response.get("Failed", []):
                change = chunk[int(failed["Id"])]
                self._on_error(
                    {
                        "event": "visibility_change_failed",
                        "messageIds": [change.message_id],
                        "error": f"{failed.get('Code')}: {failed.get('Message', '')}",
                    }
                )
