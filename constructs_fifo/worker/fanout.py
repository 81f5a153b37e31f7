"""One group per slot: a receive's records split by group, the groups past the receiving slot held for
the next free slot.

A FIFO receive of up to ``batch_size`` records may bring several groups (each in its order). A slot
that ran them all would run other groups' jobs one after another behind a long one while other slots
sat idle. So the worker splits a receive by group (:func:`split_by_group`): the receiving slot runs
the first group, and every other group waits in :class:`HeldGroups` for the next free slot, which
takes a held group before it would receive again. No slot holds another group's records while it
runs a job.

Why held, not released at once (visibility 0): every receive raises each returned record's
``ApproximateReceiveCount``, and a released record is received again. Releasing the groups past the
receiving slot on every receive would let a record of a deep backlog be received and released over
and over (once per receive that finds it behind another group) until SQS's ``maxReceiveCount``
dead-letters it without its ever running: no healthy job may die that way. A held group costs no
receive: it runs on this worker's next free slot. What holding costs: a held group waits for a slot of
this task (at most ``batch_size - 1`` groups are held, since a slot receives only when none is held);
``batch_size = 1`` holds none, for jobs so long that even that wait matters.

Held records stay in flight: the worker renews their visibility every heartbeat interval
(:meth:`HeldGroups.renew`, from the worker's own thread); a group whose renewal is refused (its
receipt handles expired: it may be another consumer's now) is let go, never run. On a stop every held
group is released at once (:meth:`HeldGroups.release_all`, visibility 0), whatever its group: none
of them started.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.aws_limits import SQS_MAX_BATCH_ENTRIES, SQS_MAX_VISIBILITY_TIMEOUT_SECONDS
from constructs_fifo.runtime.clock import Clock, system_clock
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.job import record_group

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import ChangeMessageVisibilityBatchRequestEntryTypeDef

    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["HeldGroup", "HeldGroups", "split_by_group"]


def split_by_group(records: Sequence[SQSRecord]) -> list[list[SQSRecord]]:
    """The records by group, groups in the order of their first record, each group's in received order.

    >>> def r(group, n): return {"messageId": n, "attributes": {"MessageGroupId": group}}
    >>> [[x["messageId"] for x in g] for g in split_by_group([r("a", "1"), r("b", "2"), r("a", "3")])]
    [['1', '3'], ['2']]
    """
    groups: dict[str, list[SQSRecord]] = {}
    for record in records:
        groups.setdefault(record_group(record), []).append(record)
    return list(groups.values())


@dataclass
class HeldGroup:
    """One group's records waiting for a free slot.

    Attributes
    ----------
    records : list of SQSRecord
        The group's records, in order.
    received_at : float
        Epoch seconds of their receive (SQS's 12-hour visibility cap counts from it).
    renewed_at : float
        ``time.monotonic()`` of their last renewal (or receive).
    """

    records: list[SQSRecord]
    received_at: float
    renewed_at: float


class HeldGroups:
    """The groups of a receive past the receiving slot, renewed until a free slot takes one.

    Parameters
    ----------
    sqs : SQSClient
        Renews and releases the held records (boto3 clients are thread-safe).
    queue_url : str
        The queue.
    visibility_timeout_seconds : int
        Each renewal hides the records this long from now.
    interval_seconds : float
        How often a held group is renewed (the heartbeat interval).
    on_event : Callable[[dict], None]
        Writes the worker's lines (a refused or failed renewal, a failed release).
    clock : Clock
        Epoch seconds (SQS's 12-hour cap counts from the receive: a group that reaches it is released).
    """

    def __init__(
        self,
        sqs: SQSClient,
        queue_url: str,
        *,
        visibility_timeout_seconds: int,
        interval_seconds: float,
        on_event: Callable[[dict[str, Any]], None],
        clock: Clock = system_clock,
    ) -> None:
        self._clock = clock
        self._sqs = sqs
        self._queue_url = queue_url
        self._visibility_s = visibility_timeout_seconds
        self._interval_s = interval_seconds
        self._on_event = on_event
        self._lock = threading.Lock()
        self._groups: list[HeldGroup] = []
        self._closed = False

    def __len__(self) -> int:
        with self._lock:
            return len(self._groups)

    def put(self, groups: Sequence[list[SQSRecord]], *, received_at: float) -> bool:
        """Hold ``groups``; ``False`` once released (the worker is stopping): the caller releases them."""
        with self._lock:
            if self._closed:
                return False
            now = time.monotonic()
            self._groups.extend(HeldGroup(list(g), received_at, now) for g in groups if g)
            return True

    def take(self) -> HeldGroup | None:
        """The oldest held group, no longer held (a free slot runs it); ``None`` when none is held."""
        with self._lock:
            return self._groups.pop(0) if self._groups else None

    def renew(self) -> None:
        """Renew every group due (one interval since its last renewal); let go of a group refused."""
        now = time.monotonic()
        with self._lock:
            due = [g for g in self._groups if now - g.renewed_at >= self._interval_s]
        for group in due:
            # ChangeMessageVisibility cannot pass 12 hours from the receive: at the cap, the group goes back
            left_s = int(SQS_MAX_VISIBILITY_TIMEOUT_SECONDS - (self._clock() - group.received_at) - 1)
            outcome = self._change(group.records, max(0, min(self._visibility_s, left_s)))
            if left_s <= 0 and outcome is True:
                outcome = False
            with self._lock:
                if group not in self._groups:  # a slot took it meanwhile: its heartbeat renews it now
                    continue
                if outcome is True:
                    group.renewed_at = now
                elif outcome is False or now - group.renewed_at >= self._visibility_s:
                    self._groups.remove(group)
                    self._on_event(
                        {
                            "level": "WARNING",
                            "event": "held_group_lost",
                            "group": record_group(group.records[0]),
                            "records": len(group.records),
                            "action": "not run here: its records' visibility ran out, another consumer "
                            "may hold them now",
                        }
                    )

    def release_all(self) -> int:
        """Release every held group at once (visibility 0) and hold nothing more; return the records."""
        with self._lock:
            self._closed = True
            groups, self._groups = self._groups, []
        records = [record for group in groups for record in group.records]
        if records:
            self._change(records, 0)
        return len(records)

    def _change(self, records: Sequence[SQSRecord], seconds: int) -> bool | None:
        """Set the records' visibility: ``True`` done, ``False`` refused, ``None`` the call failed."""
        refused = False
        for start in range(0, len(records), SQS_MAX_BATCH_ENTRIES):
            chunk = records[start : start + SQS_MAX_BATCH_ENTRIES]
            entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
                {"Id": str(i), "ReceiptHandle": r["receiptHandle"], "VisibilityTimeout": seconds}
                for i, r in enumerate(chunk)
            ]
            try:
                response = self._sqs.change_message_visibility_batch(
                    QueueUrl=self._queue_url, Entries=entries
                )
            except Exception as exc:  # a renewal is tried again next round; a release runs out on its own
                event = "release_failed" if seconds == 0 else "held_renewal_failed"
                self._on_event(
                    {"level": "WARNING", "event": event, "error": describe(exc), "records": len(chunk)}
                )
                return None
            refused = refused or bool(response.get("Failed"))
        return not refused
