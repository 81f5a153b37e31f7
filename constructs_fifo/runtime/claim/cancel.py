"""Cancelling one job in claim mode: the canceller's conditional writes on the job's claim item.

The runtime reads nothing new for this: every job's first call is already a conditional ``PutItem``
of its claim item (:mod:`~constructs_fifo.runtime.claim.store`, rule 1), and every later write of an
attempt is fenced on its owner token (rule 4, ``renew``). A cancel is a conditional write of that same
item, so a queue that never cancels pays nothing, and the runtime and the canceller are ordered by
DynamoDB's conditions alone. Rules, on the item as read (``ReturnValuesOnConditionCheckFailure`` gives
it at no cost when a write loses its condition, and the rules are applied again to what it found):

1. **No claim** (or one past its ``expiration``): one ``PutItem`` of a ``CANCELLED`` item on rule 1's
   condition. The runtime's claim of the job then fails its condition, finds ``CANCELLED`` and deletes
   the record without running it: the job **never runs** (``NOT_STARTED``). A claim that got there
   first makes the put fail; the cancel goes on with what the claim wrote (rule 2).
2. **Taken** (``IN_FLIGHT``, or ``FAILED`` between attempts): one ``UpdateItem`` to ``CANCELLED`` with
   a new owner token, on condition that the owner and status are those read. The attempt that held
   the claim can no longer write: its ``SUCCEEDED``, ``FAILED`` or ``DEAD`` is refused (the runtime
   then finds ``CANCELLED`` and deletes the record), and so is its worker's next heartbeat renewal
   (the job is told through ``context.cancelled`` within one heartbeat interval). A job function on
   Lambda cannot be interrupted: it runs to its end, its result is not recorded. Either way the
   attempt's **effect may have happened** (``STOPPED``, ``running`` when its lease was live). If the
   attempt's own write won the race, the update fails and the cancel finds what it wrote (rule 3).
3. **Finished** (``SUCCEEDED`` or ``DEAD``): refused; nothing is written. A job reported succeeded is
   never cancelled, and a cancelled one is never reported succeeded: whichever write came first
   holds the item.
4. **Cancelled already**: nothing is written (``ALREADY_CANCELLED``): a cancel may be repeated.

A ``CANCELLED`` item keeps (or gets) the claim's ``expiration``: a copy of the job sent after the claim
TTL runs, as a copy of a succeeded job does. What a cancel costs: one write (rule 1 or 2), one more
per lost race; and the running attempt's refused write makes its runtime read the item once (one
``GetItem``) to tell a cancel from another worker's takeover.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import (
    ATTR_ATTEMPTS,
    ATTR_EXPIRATION,
    ATTR_GROUP,
    ATTR_ID,
    ATTR_LEASE_EXPIRES_AT,
    ATTR_OWNER,
    ATTR_STATUS,
    ATTR_UPDATED_AT,
    STATUS_DEAD,
    STATUS_IN_FLIGHT,
    STATUS_SUCCEEDED,
)
from constructs_fifo.runtime.steering.names import (
    ATTR_CANCEL_REASON,
    ATTR_CANCELLED_BY,
    ATTR_CANCELLED_RUNNING,
    MAX_CANCEL_REASON_LENGTH,
    STATUS_CANCELLED,
)
from constructs_fifo.runtime.steering.report import CancelOutcome, CancelReport

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from constructs_fifo.runtime.clock import Clock

__all__ = ["ClaimCanceller", "decide_cancel"]

#: Lost races a cancel retries before it says so (each loss means the item moved on: a claim, a
#: renewal, an attempt's end; three in a row within one cancel takes a storm of copies).
_MAX_ROUNDS = 8
_NEW_CONDITION = "attribute_not_exists(#id) OR #expiration < :now_s"
_TAKEN_CONDITION = "#owner = :old_owner AND #status = :old_status"
_REFUSED_SUCCEEDED = "refused: the job already succeeded"
_REFUSED_DEAD = (
    "refused: the job is dead (drop its letter with `dlq drop`, or skip it with `groups resume --skip-dead`)"
)


def decide_cancel(job_id: str, item: dict[str, Any] | None, *, now_ms: int) -> CancelReport:
    """The report a cancel gives for a claim item as read (pure: rules 1 to 4 of the module)."""
    expiration = _int(item.get(ATTR_EXPIRATION), default=None) if item is not None else None
    if item is None or (expiration is not None and expiration < now_ms // 1000):
        return CancelReport(job_id, CancelOutcome.NOT_STARTED, detail="not started: it will never run")
    status = item.get(ATTR_STATUS)
    attempt = _int(item.get(ATTR_ATTEMPTS), default=0)
    group = str(item.get(ATTR_GROUP) or "") or None
    if status == STATUS_CANCELLED:
        running = item.get(ATTR_CANCELLED_RUNNING) is True
        return CancelReport(
            job_id, CancelOutcome.ALREADY_CANCELLED, running, attempt, group, detail="cancelled already"
        )
    if status == STATUS_SUCCEEDED:
        return CancelReport(job_id, CancelOutcome.SUCCEEDED, False, attempt, group, detail=_REFUSED_SUCCEEDED)
    if status == STATUS_DEAD:
        return CancelReport(
            job_id,
            CancelOutcome.DEAD,
            False,
            attempt,
            group,
            detail=_REFUSED_DEAD,
        )
    lease = _int(item.get(ATTR_LEASE_EXPIRES_AT), default=0)
    running = status == STATUS_IN_FLIGHT and lease >= now_ms
    if running:
        detail = (
            f"attempt {attempt} is running: its result will not be recorded (a worker's run is told "
            "through context.cancelled; a function runs to its end); its effect may have happened"
        )
    else:
        detail = f"{attempt} attempt(s) ran and did not succeed; no further attempt runs"
    return CancelReport(job_id, CancelOutcome.STOPPED, running, attempt, group, detail=detail)


class ClaimCanceller:
    """Cancels jobs in a claim table; see the module docstring for the rules.

    Parameters
    ----------
    table_name : str
        The claim table.
    client : DynamoDBClient
        A boto3 DynamoDB client.
    ttl_seconds : int
        Lifetime of a CANCELLED item written where there was no claim (the queue's ``claim_ttl``).
    clock : Callable[[], float]
        Epoch seconds.
    """

    def __init__(self, table_name: str, client: DynamoDBClient, *, ttl_seconds: int, clock: Clock) -> None:
        self.table_name = table_name
        self._client = client
        self._ttl_seconds = ttl_seconds
        self._claims = ClaimStore(table_name, client, ttl_seconds=ttl_seconds, clock=clock)

    def preview(self, job_id: str) -> CancelReport:
        """What :meth:`cancel` would do now (one consistent read; nothing written)."""
        report = decide_cancel(job_id, self._claims.get(job_id), now_ms=self._claims.now_ms())
        return replace(report, dry_run=True)

    def in_flight(self, group: str) -> list[str]:
        """The jobs of ``group`` whose claim is ``IN_FLIGHT`` now: one consistent ``Scan`` of the claim
        table filtered on the group (its cost is the table's size: for an operator's ``groups cancel
        --running``, never the runtime's path)."""
        found: list[str] = []
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "FilterExpression": "#group = :group AND #status = :in_flight",
            "ExpressionAttributeNames": {"#group": ATTR_GROUP, "#status": ATTR_STATUS, "#id": ATTR_ID},
            "ExpressionAttributeValues": {":group": {"S": group}, ":in_flight": {"S": STATUS_IN_FLIGHT}},
            "ProjectionExpression": "#id",
            "ConsistentRead": True,
        }
        while True:
            response = self._client.scan(**params)
            found += [str(item[ATTR_ID]["S"]) for item in response.get("Items", [])]
            if "LastEvaluatedKey" not in response:
                return found
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def cancel(self, job_id: str, *, group: str | None, reason: str, by: str) -> CancelReport:
        """Cancel ``job_id`` (rules 1 to 4); ``group`` is stored on a new item (the outcome names it).

        Raises
        ------
        RuntimeError
            The item moved on ``_MAX_ROUNDS`` times in a row during this cancel (nothing is lost: the
            cancel may be called again).
        """
        extra = {
            ATTR_CANCEL_REASON: {"S": reason[:MAX_CANCEL_REASON_LENGTH]},
            ATTR_CANCELLED_BY: {"S": by[:MAX_CANCEL_REASON_LENGTH]},
        }
        item = self._put_new(job_id, group, extra)
        for _ in range(_MAX_ROUNDS):
            now_ms = self._claims.now_ms()
            report = decide_cancel(job_id, item, now_ms=now_ms)
            if item is None:
                return report
            if report.outcome is not CancelOutcome.STOPPED:
                if report.outcome is CancelOutcome.NOT_STARTED:  # the item expired: rule 1 again
                    item = self._put_new(job_id, group, extra)
                    continue
                return report
            written, item = self._take(job_id, item, extra, running=report.running)
            if written:
                return report
            if item is None:  # the item is gone (an operator reset it): rule 1 again
                item = self._put_new(job_id, group, extra)
        raise RuntimeError(
            f"job {job_id!r}: its claim changed {_MAX_ROUNDS} times during the cancel; call it again"
        )

    def _put_new(self, job_id: str, group: str | None, extra: dict[str, Any]) -> dict[str, Any] | None:
        """Rule 1; ``None`` when written, else the item found (decoded)."""
        now_ms = self._claims.now_ms()
        item: dict[str, Any] = {
            ATTR_ID: {"S": job_id},
            ATTR_STATUS: {"S": STATUS_CANCELLED},
            ATTR_OWNER: {"S": str(uuid.uuid4())},
            ATTR_ATTEMPTS: {"N": "0"},
            ATTR_UPDATED_AT: {"N": str(now_ms)},
            ATTR_EXPIRATION: {"N": str(now_ms // 1000 + self._ttl_seconds)},
            **extra,
        }
        if group:
            item[ATTR_GROUP] = {"S": group}
        try:
            self._client.put_item(
                TableName=self.table_name,
                Item=item,
                ConditionExpression=_NEW_CONDITION,
                ExpressionAttributeNames={"#id": ATTR_ID, "#expiration": ATTR_EXPIRATION},
                ExpressionAttributeValues={":now_s": {"N": str(now_ms // 1000)}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            return _decoded(exc.response.get("Item"))
        return None

    def _take(
        self, job_id: str, found: dict[str, Any], extra: dict[str, Any], *, running: bool
    ) -> tuple[bool, dict[str, Any] | None]:
        """Rule 2: ``(True, None)`` when written, else ``(False, the item found)`` (``None``: none)."""
        values: dict[str, Any] = {
            ":cancelled": {"S": STATUS_CANCELLED},
            ":token": {"S": str(uuid.uuid4())},
            ":now": {"N": str(self._claims.now_ms())},
            ":old_owner": {"S": str(found.get(ATTR_OWNER, ""))},
            ":old_status": {"S": str(found.get(ATTR_STATUS, ""))},
            ":running": {"BOOL": running},
            ":reason": extra[ATTR_CANCEL_REASON],
            ":by": extra[ATTR_CANCELLED_BY],
        }
        try:
            self._client.update_item(
                TableName=self.table_name,
                Key={ATTR_ID: {"S": job_id}},
                UpdateExpression=(
                    "SET #status = :cancelled, #owner = :token, #updated_at = :now, #running = :running,"
                    " #reason = :reason, #by = :by REMOVE #lease"
                ),
                ConditionExpression=_TAKEN_CONDITION,
                ExpressionAttributeNames={
                    "#status": ATTR_STATUS,
                    "#owner": ATTR_OWNER,
                    "#updated_at": ATTR_UPDATED_AT,
                    "#running": ATTR_CANCELLED_RUNNING,
                    "#reason": ATTR_CANCEL_REASON,
                    "#by": ATTR_CANCELLED_BY,
                    "#lease": ATTR_LEASE_EXPIRES_AT,
                },
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            return False, _decoded(exc.response.get("Item"))
        return True, None


def _decoded(item: Any) -> dict[str, Any] | None:
    """An ALL_OLD item decoded as :meth:`ClaimStore.get` decodes; ``None`` when there was none."""
    if not item:
        return None
    decoded: dict[str, Any] = {}
    for name, value in cast("dict[str, dict[str, Any]]", item).items():
        if "S" in value:
            decoded[name] = value["S"]
        elif "N" in value:
            number = float(value["N"])
            decoded[name] = int(number) if number.is_integer() else number
        elif "BOOL" in value:
            decoded[name] = bool(value["BOOL"])
    return decoded


def _int(value: object, *, default: int | None) -> Any:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
