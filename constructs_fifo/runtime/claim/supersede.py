"""The newest wins (claim mode): a job sent with a supersede key is skipped when a newer job of its
group and key was sent after it (``supersede="run_tests"``: only the latest patch's tests run).

Rules:

1. **Marked before sent.** The producer
   (:meth:`constructs_fifo.client.steering.JobSteering.send_superseding`) writes the key's marker, an
   item of the claim table (``id`` = ``supersede#<group>#<key>``, ``newest`` = the job's id, with the
   claim TTL), *before* it sends the job. So once a job's message exists, the marker names it or a job
   sent after it.
2. **Read only for such jobs.** For a job whose body names a key (``"supersede"``), and only for those,
   the runtime reads the marker (one consistent ``GetItem``) before its claim; a queue that never
   supersedes pays nothing. The marker names another job: a newer one was sent (rule 1), so this one
   is cancelled by the runtime itself (:class:`~constructs_fifo.runtime.claim.cancel.ClaimCanceller`,
   ``cancelled_by = "supersede"``, the reason naming the newer job) and deleted without running:
   ``SUPERSEDED``. It names this job, or there is none (expired): the job runs.
3. **The newest is never skipped**: the marker names it until a newer one is marked. **An older job
   never runs after a newer one**: the group is delivered in send order, and the older was sent first.
4. **A started older job** (failed once, waiting for its retry) is stopped as a cancel stops it; a
   running one (a marker written while it runs) runs to its end, unless rule 5.
5. **Stopping the running older job** (``send_superseding(..., cancel_running=True)``): the marker keeps
   the key's last ``MAX_SUPERSEDE_RECENT`` job ids; after the mark, each of them that has started
   (``IN_FLIGHT``, or ``FAILED`` between attempts) is cancelled by the rules of
   :mod:`~constructs_fifo.runtime.claim.cancel` with ``cancelled_by = "supersede"``: a container
   worker's run is told (``context.cancelled``) within one heartbeat interval, and its result is
   refused; a function's run goes on to its end, and its result is refused. Its outcome reads
   ``superseded`` (``cancelled_while_running``: its effect may have happened); its line ``CANCELLED``
   with ``cancelledBy: supersede`` and ``whileRunning: true``.

The race left to the producer: two producers sending to one (group, key) at once can mark in one order
and send in the other; the marker then names the job sent first, and the job sent last is skipped. Send
a key's jobs from one producer (one session), as a group's order already asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.claim.cancel import ClaimCanceller
from constructs_fifo.runtime.constants import (
    ATTR_EXPIRATION,
    ATTR_GROUP,
    ATTR_ID,
    ATTR_UPDATED_AT,
)
from constructs_fifo.runtime.steering.names import (
    MAX_SUPERSEDE_RECENT,
    SUPERSEDE_KEY_PREFIX,
    SUPERSEDED_BY,
    SUPERSEDED_REASON_PREFIX,
)
from constructs_fifo.runtime.steering.report import CancelOutcome, CancelReport

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from constructs_fifo.runtime.claim.store import ClaimStore
    from constructs_fifo.runtime.clock import Clock

__all__ = ["ATTR_NEWEST", "ATTR_RECENT", "Supersession", "marker_id"]

#: The marker's attribute naming the newest job of its key.
ATTR_NEWEST = "newest"
#: The marker's list of the key's jobs marked last (oldest first), for rule 5.
ATTR_RECENT = "recent"


def marker_id(group: str, key: str) -> str:
    """The marker item's ``id`` for ``key`` in ``group``."""
    return f"{SUPERSEDE_KEY_PREFIX}{group}#{key}"


class Supersession:
    """Reads and writes supersede markers in the claim table; see the module docstring for the rules."""

    def __init__(self, table_name: str, client: DynamoDBClient, *, ttl_seconds: int, clock: Clock) -> None:
        self.table_name = table_name
        self._client = client
        self._ttl_seconds = ttl_seconds
        self._clock = clock
        self._canceller = ClaimCanceller(table_name, client, ttl_seconds=ttl_seconds, clock=clock)

    @classmethod
    def of(cls, claims: ClaimStore, *, ttl_seconds: int) -> Supersession:
        """The supersession of ``claims``' table, client and clock."""
        return cls(claims.table_name, claims.client, ttl_seconds=ttl_seconds, clock=claims.clock)

    def newest(self, group: str, key: str) -> str | None:
        """Rule 2's read: the newest job marked for ``key`` in ``group`` (``None``: no marker)."""
        response = self._client.get_item(
            TableName=self.table_name, Key={ATTR_ID: {"S": marker_id(group, key)}}, ConsistentRead=True
        )
        item: dict[str, Any] = dict(response.get("Item") or {})
        return str(item[ATTR_NEWEST]["S"]) if ATTR_NEWEST in item else None

    def mark(self, group: str, key: str, job_id: str) -> tuple[str, ...]:
        """Rule 1: name ``job_id`` the newest of ``key`` (before it is sent); return the key's jobs
        marked before it (at most ``MAX_SUPERSEDE_RECENT``, oldest first), for rule 5."""
        now_ms = int(self._clock() * 1000)
        response = self._client.update_item(
            TableName=self.table_name,
            Key={ATTR_ID: {"S": marker_id(group, key)}},
            UpdateExpression="SET #newest = :id, #group = :group, #updated = :now, #expiration = :exp, "
            "#recent = list_append(if_not_exists(#recent, :none), :ids)",
            ExpressionAttributeNames={
                "#newest": ATTR_NEWEST,
                "#group": ATTR_GROUP,
                "#updated": ATTR_UPDATED_AT,
                "#expiration": ATTR_EXPIRATION,
                "#recent": ATTR_RECENT,
            },
            ExpressionAttributeValues={
                ":id": {"S": job_id},
                ":group": {"S": group},
                ":now": {"N": str(now_ms)},
                ":exp": {"N": str(now_ms // 1000 + self._ttl_seconds)},
                ":none": {"L": []},
                ":ids": {"L": [{"S": job_id}]},
            },
            ReturnValues="UPDATED_NEW",
        )
        recent = [
            str(v.get("S", "")) for v in response.get("Attributes", {}).get(ATTR_RECENT, {}).get("L", [])
        ]
        if len(recent) > 2 * MAX_SUPERSEDE_RECENT:  # trimmed once every MAX_SUPERSEDE_RECENT marks
            drop = len(recent) - MAX_SUPERSEDE_RECENT
            self._client.update_item(
                TableName=self.table_name,
                Key={ATTR_ID: {"S": marker_id(group, key)}},
                UpdateExpression="REMOVE " + ", ".join(f"#recent[{n}]" for n in range(drop)),
                ExpressionAttributeNames={"#recent": ATTR_RECENT},
            )
        return tuple(recent[:-1][-MAX_SUPERSEDE_RECENT:])

    def stop_running(self, older: tuple[str, ...], *, group: str, newer: str) -> list[CancelReport]:
        """Rule 5: cancel each of ``older`` that has started (running, or between attempts): its worker
        is told at its next heartbeat, its result is refused. One consistent read per job, one write per
        started one; a job not started is left to rule 2."""
        stopped: list[CancelReport] = []
        for job_id in older:
            if job_id == newer or self._canceller.preview(job_id).outcome is not CancelOutcome.STOPPED:
                continue
            stopped.append(self.supersede(job_id, group=group, newer=newer))
        return stopped

    def supersede(self, job_id: str, *, group: str, newer: str) -> CancelReport:
        """Rule 2: cancel ``job_id``, superseded by ``newer``."""
        return self._canceller.cancel(
            job_id, group=group, reason=f"{SUPERSEDED_REASON_PREFIX}{newer}", by=SUPERSEDED_BY
        )
