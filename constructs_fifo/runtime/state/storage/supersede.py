"""The newest wins (state mode): a job sent with a supersede key is not applied when a newer job of its
group and key was sent before it was applied (``supersede="run_tests"``: only the latest patch's tests
are applied).

Rules:

1. **Marked before sent, in the state item.** The producer
   (:meth:`constructs_fifo.client.steering.JobSteering.send_superseding`) writes the key's marker into
   the group's state item (``supersede``: JSON ``{key: newest job id}``) *before* it sends the job, with
   ``version + 1`` on condition of the version it read (the state item's one conditional write,
   :func:`~constructs_fifo.runtime.state.storage.cancels.write_at_version`). The runtime reads markers
   with the state it reads anyway (the batch's one ``BatchGetItem``), so a queue, and a job, without a
   key pays nothing; the runtime's commit carries the markers over.
2. **Skipped when older.** When the core meets a job whose key's marker names another job
   (:mod:`~constructs_fifo.runtime.state.core.engine`), that job was marked after it (rule 1, one
   producer), so it is newer: this one is cancelled by the runtime itself (``cancelled_by =
   "supersede"``, reason ``superseded by <newer>``), never applied, and its place closes as a cancelled
   job's (its ``seq`` passes, or its id is remembered), so nothing waits for it: ``SUPERSEDED``,
   ``JobsSuperseded``. A buffered job (a ``seq`` waiting for its gap) meets the marker when its turn
   comes, the same way.
3. **Strict, by the version.** The mark moves the version, so a batch that read the group before the
   mark cannot commit (``FENCED``: its records come back and meet the marker): an older job not applied
   when the newer was marked is never applied. (Claim mode lets a job already running finish; here a
   transition in flight is simply not committed.)
4. **The newest is never skipped**: the marker names it until a newer one is marked; once it had its
   turn (applied, cancelled or dead) its marker is removed, so the item keeps markers of pending keys
   only (at most ``MAX_SUPERSEDE_KEYS``, the oldest forgotten: an older job of a forgotten key is
   applied, never one skipped wrongly). **An older job is never applied after a newer one**: the group
   is applied in send order (or ``seq`` order), and the older comes first.

The race left to the producer, as in claim mode: two producers sending one (group, key) at once can
mark in one order and send in the other. A mark whose send then fails still names that job: an older
job arriving meanwhile is skipped for it; send it again.

What it costs: per superseding send, one ``GetItem`` and one ``UpdateItem`` of the state item (its
size), one more of each per lost race; it fences the group's batch in flight once (its records come
back after the first backoff). The runtime pays nothing more: the markers are in the item it reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.state.storage.book import encode_newest
from constructs_fifo.runtime.state.storage.cancels import read_group, write_at_version
from constructs_fifo.runtime.steering.names import MAX_SUPERSEDE_KEYS, STATE_ATTR_SUPERSEDE

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = ["StateSupersession"]

_MAX_ROUNDS = 8


class StateSupersession:
    """Writes and reads supersede markers in a state-mode group table; see the module docstring."""

    def __init__(self, table_name: str, client: DynamoDBClient, *, clock: Clock = system_clock) -> None:
        self.table_name = table_name
        self._client = client
        self._clock = clock

    def newest(self, group: str, key: str) -> str | None:
        """The newest job marked for ``key`` in ``group`` and not applied yet (``None``: none)."""
        return read_group(self._client, self.table_name, group).newest.get(key)

    def mark(self, group: str, key: str, job_id: str) -> str | None:
        """Rule 1: name ``job_id`` the newest of ``key`` (before it is sent); return the job the marker
        named before (``None``: none pending).

        Raises
        ------
        RuntimeError
            The group's item changed ``_MAX_ROUNDS`` times in a row (call it again).
        """
        for _ in range(_MAX_ROUNDS):
            read = read_group(self._client, self.table_name, group)
            markers = dict(read.newest)
            before = markers.pop(key, None)
            markers[key] = job_id
            kept = dict(list(markers.items())[-MAX_SUPERSEDE_KEYS:])
            if write_at_version(
                self._client,
                self.table_name,
                group,
                STATE_ATTR_SUPERSEDE,
                encode_newest(kept),
                version=read.version,
                now_ms=epoch_ms(self._clock),
            ):
                return before
        raise RuntimeError(
            f"group {group!r}: its state changed {_MAX_ROUNDS} times during the mark; call it again"
        )
