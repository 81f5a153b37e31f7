"""Cancelling one job in state mode: the canceller's conditional write on the group's state item.

The runtime already reads every group's state item per batch and writes it on condition of the
version it read, so a cancel is kept where it reads: in the state item's ``cancelled`` attribute
(:mod:`~constructs_fifo.runtime.state.storage.store`). A queue that never cancels pays nothing (the
attribute is absent). Rules:

1. **One conditional write.** The canceller reads the item (consistent), decides (rule 2), and
   writes ``cancelled`` with ``version + 1`` on condition that the item is still at the version read
   (no item: that none exists). A run that read the group before the cancel and commits after it
   loses its race (``FENCED``): nothing of it stands, its records come back and meet the cancel. A
   run that committed first makes the cancel's write fail; the cancel reads again and decides again.
   So the cancel and the job's application are ordered by the version alone.
2. **Decide.** Applied (its id among the remembered ids; with a ``seq``, a ``seq`` at or below the
   last applied): refused, ``SUCCEEDED``. Dead: refused, ``DEAD``. Cancelled before:
   ``ALREADY_CANCELLED``. Otherwise (not arrived, buffered, failed and waiting for its retry, kept
   behind a parked group): ``NOT_STARTED``: **it is never applied**. A transition is pure and its
   state is committed with it, so a cancelled job has no effect, though a run whose commit the cancel
   refused may have called its transition.
3. **Its place closes.** When the cancelled job arrives (or its gap closes in the reorder buffer) its
   transition is not called: its ``seq`` (or its id) is recorded as if applied, with the state
   unchanged, so no later job waits for it, and its line says ``CANCELLED``. A cancelled job whose
   message never arrives leaves its ``seq`` missing: the gap policy applies, as for any lost job.
4. **A job with a seq needs its seq.** A group that has applied a ``seq`` remembers seqs, not ids, so
   a cancel without the ``seq`` cannot tell whether the job was applied: it is refused before
   anything is written (``SteeringQueryError`` in the client). The group remembers its last
   ``MAX_CANCELLED_IDS`` cancels; an older cancelled job that arrives later is applied.

What a cancel costs: one ``GetItem`` and one ``UpdateItem`` (one more of each per lost race), each
as large as the state item; the runtime pays nothing more.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.constants import (
    GROUP_ATTR_GROUP,
    GROUP_ATTR_SK,
    STATE_ATTR_UPDATED_AT,
    STATE_ATTR_VERSION,
    STATE_SK,
)
from constructs_fifo.runtime.state.core.records import CancelEntry, GroupState, job_key
from constructs_fifo.runtime.state.storage.book import encode_cancelled
from constructs_fifo.runtime.state.storage.store import decode_item
from constructs_fifo.runtime.steering.names import (
    MAX_CANCEL_REASON_LENGTH,
    MAX_CANCELLED_IDS,
    STATE_ATTR_CANCELLED,
)
from constructs_fifo.runtime.steering.report import CancelOutcome, CancelReport

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = ["SeqRequiredError", "StateCanceller", "decide_state_cancel", "read_group", "write_at_version"]

_MAX_ROUNDS = 8
_ALREADY = "cancelled already"
_APPLIED = "refused: the job was applied"


class SeqRequiredError(ValueError):
    """Rule 4: the group applies seqs, and the cancel did not give the job's ``seq``."""


def decide_state_cancel(job_id: str, group_state: GroupState, *, seq: int | None) -> CancelReport:
    """Rule 2 on a group's state as read (pure).

    Raises
    ------
    SeqRequiredError
        Rule 4.
    """
    book = group_state.book
    group = group_state.group
    for entry in group_state.cancelled:
        if entry.job_id == job_id:
            return CancelReport(
                job_id, CancelOutcome.ALREADY_CANCELLED, group=group, detail="cancelled already"
            )
    if job_id in book.dead:
        return CancelReport(
            job_id, CancelOutcome.DEAD, group=group, detail="refused: the job is dead (its group's dead job)"
        )
    if seq is None and book.last_seq is not None:
        raise SeqRequiredError(
            f"job {job_id!r}: group {group!r} applies seqs (last {book.last_seq}), so whether the job was "
            "applied is known by its seq only. Fix: pass the job's seq (--seq on the CLI)."
        )
    applied = (seq is not None and book.last_seq is not None and seq <= book.last_seq) or (
        seq is None and job_key(job_id) in book.applied
    )
    if applied:
        return CancelReport(
            job_id, CancelOutcome.SUCCEEDED, group=group, detail="refused: the job was applied"
        )
    attempts = book.attempts.get(job_id, 0)
    return CancelReport(
        job_id,
        CancelOutcome.NOT_STARTED,
        attempt=attempts,
        group=group,
        detail="not applied: it never will be (its place in the group closes when it arrives)",
    )


class StateCanceller:
    """Cancels jobs in a state-mode group table; see the module docstring for the rules."""

    def __init__(self, table_name: str, client: DynamoDBClient, *, clock: Clock = system_clock) -> None:
        self.table_name = table_name
        self._client = client
        self._clock = clock

    def preview(self, job_id: str, group: str, *, seq: int | None = None) -> CancelReport:
        """What :meth:`cancel` would do now (one consistent read; nothing written)."""
        return replace(decide_state_cancel(job_id, self._read(group), seq=seq), dry_run=True)

    def cancel(
        self, job_id: str, group: str, *, seq: int | None = None, reason: str = "", by: str = ""
    ) -> CancelReport:
        """Cancel ``job_id`` of ``group`` (rules 1 to 4).

        Raises
        ------
        SeqRequiredError
            Rule 4.
        RuntimeError
            The group's item changed ``_MAX_ROUNDS`` times in a row during the cancel (call it again).
        """
        for _ in range(_MAX_ROUNDS):
            read = self._read(group)
            report = decide_state_cancel(job_id, read, seq=seq)
            if report.outcome is not CancelOutcome.NOT_STARTED:
                return report
            entry = CancelEntry(
                job_id,
                epoch_ms(self._clock),
                reason[:MAX_CANCEL_REASON_LENGTH],
                by[:MAX_CANCEL_REASON_LENGTH],
            )
            entries = (*read.cancelled, entry)[-MAX_CANCELLED_IDS:]
            if self._write(group, entries, read.version):
                return report
        raise RuntimeError(
            f"group {group!r}: its state changed {_MAX_ROUNDS} times during the cancel; call it again"
        )

    def _read(self, group: str) -> GroupState:
        return read_group(self._client, self.table_name, group)

    def _write(self, group: str, entries: tuple[CancelEntry, ...], version: int) -> bool:
        """Rule 1: ``cancelled`` and ``version + 1`` on condition of ``version``; ``False``: lost."""
        return write_at_version(
            self._client,
            self.table_name,
            group,
            STATE_ATTR_CANCELLED,
            encode_cancelled(entries),
            version=version,
            now_ms=epoch_ms(self._clock),
        )


def write_at_version(
    client: DynamoDBClient, table_name: str, group: str, name: str, text: str, *, version: int, now_ms: int
) -> bool:
    """Set the state item's attribute ``name`` to ``text`` and its version to ``version + 1``, on
    condition that it is still at ``version`` (0: that there is no item); ``False``: the race was lost.

    A steering write of the state item (a cancel, a supersede marker) moves the version, so a batch
    that read the group before it cannot commit over it: the runtime's commit is a whole-item
    ``PutItem`` on the version it read.
    """
    values: dict[str, Any] = {
        ":text": {"S": text},
        ":next": {"N": str(version + 1)},
        ":now": {"N": str(now_ms)},
    }
    if version == 0:
        condition = "attribute_not_exists(#group)"
        names = {"#group": GROUP_ATTR_GROUP}
    else:
        condition = "#version = :expected"
        names = {}
        values[":expected"] = {"N": str(version)}
    try:
        client.update_item(
            TableName=table_name,
            Key={GROUP_ATTR_GROUP: {"S": group}, GROUP_ATTR_SK: {"S": STATE_SK}},
            UpdateExpression="SET #attr = :text, #version = :next, #updated_at = :now",
            ConditionExpression=condition,
            ExpressionAttributeNames={
                **names,
                "#attr": name,
                "#version": STATE_ATTR_VERSION,
                "#updated_at": STATE_ATTR_UPDATED_AT,
            },
            ExpressionAttributeValues=values,
        )
    except client.exceptions.ConditionalCheckFailedException:
        return False
    return True


def read_group(client: DynamoDBClient, table_name: str, group: str) -> GroupState:
    """The group's state item as it is now (one consistent ``GetItem``; no item: version 0)."""
    response = client.get_item(
        TableName=table_name,
        Key={GROUP_ATTR_GROUP: {"S": group}, GROUP_ATTR_SK: {"S": STATE_SK}},
        ConsistentRead=True,
    )
    item = response.get("Item")
    return decode_item(dict(item)) if item else GroupState(group)
