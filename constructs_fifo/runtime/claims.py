"""The claim table: one item per job, written before the side effect and fenced on its owner.

Item attributes: ``id`` (jobId), ``status`` (IN_FLIGHT | SUCCEEDED | FAILED), ``group``, ``type``,
``owner`` (a uuid4 per attempt), ``lease_expires_at`` (epoch ms), ``attempts`` (the record's
ApproximateReceiveCount), ``updated_at`` (epoch ms), ``expiration`` (epoch s, the TTL attribute),
``message_id``, ``permanent`` (BOOL) and, on FAILED, ``error`` and ``error_type``.

Call budget: a new job that succeeds costs exactly two DynamoDB calls (the conditional PutItem of
:meth:`ClaimStore.claim` and the fenced UpdateItem of :meth:`ClaimStore.complete`); a duplicate costs
one, because the PutItem's condition failure returns the existing item (``ALL_OLD``). A malformed body
that carries a usable ``jobId`` costs one (:meth:`ClaimStore.fail_malformed` puts the FAILED item
directly, under the same condition as a claim).
"""

from __future__ import annotations

import enum
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from constructs_fifo.runtime.constants import (
    ATTR_ATTEMPTS,
    ATTR_ERROR,
    ATTR_ERROR_TYPE,
    ATTR_EXPIRATION,
    ATTR_GROUP,
    ATTR_ID,
    ATTR_LEASE_EXPIRES_AT,
    ATTR_MESSAGE_ID,
    ATTR_OWNER,
    ATTR_PERMANENT,
    ATTR_STATUS,
    ATTR_TYPE,
    ATTR_UPDATED_AT,
    STATUS_FAILED,
    STATUS_IN_FLIGHT,
    STATUS_SUCCEEDED,
)
from constructs_fifo.runtime.exceptions import MalformedJobError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from constructs_fifo.runtime.job import Job

__all__ = ["MAX_ERROR_LENGTH", "Claim", "ClaimOutcome", "ClaimStore"]

#: Stored error messages are cut to this many characters (items stay small and cheap).
MAX_ERROR_LENGTH = 1024

_CONDITION_FAILED = "ConditionalCheckFailedException"

# Every attribute goes through a placeholder: status, group, type and owner are DynamoDB reserved words.
_NAMES = {
    "#id": ATTR_ID,
    "#status": ATTR_STATUS,
    "#permanent": ATTR_PERMANENT,
    "#message_id": ATTR_MESSAGE_ID,
    "#lease": ATTR_LEASE_EXPIRES_AT,
    "#expiration": ATTR_EXPIRATION,
}
_CLAIM_CONDITION = (
    "attribute_not_exists(#id)"
    " OR (#status = :failed AND NOT (#permanent = :true AND #message_id = :mid))"
    " OR (#status = :in_flight AND #lease < :now_ms)"
    " OR #expiration < :now_s"
)


class ClaimOutcome(enum.Enum):
    """What :meth:`ClaimStore.claim` found."""

    #: The claim is ours: run the job.
    ACQUIRED = "ACQUIRED"
    #: The job already SUCCEEDED: skip it and let its message be deleted.
    DUPLICATE = "DUPLICATE"
    #: Another worker holds a live IN_FLIGHT lease: retry later, do not run.
    CONFLICT = "CONFLICT"
    #: This very message already failed permanently: do not run it again; let it reach the DLQ.
    KNOWN_POISON = "KNOWN_POISON"


@dataclass(frozen=True)
class Claim:
    """The result of one claim attempt.

    Attributes
    ----------
    outcome : ClaimOutcome
        What happened.
    job_id : str
        The job's id.
    owner : str or None
        Our owner token when ``ACQUIRED`` (the fence of :meth:`ClaimStore.complete`/``fail``).
    lease_expires_at_ms : int or None
        The lease end: ours when ``ACQUIRED``, the other worker's when ``CONFLICT``.
    existing : dict or None
        The item found when the claim was refused, decoded to plain Python values.
    """

    outcome: ClaimOutcome
    job_id: str
    owner: str | None = None
    lease_expires_at_ms: int | None = None
    existing: dict[str, Any] | None = None


class ClaimStore:
    """Claims, completes and fails jobs in the claim table.

    Parameters
    ----------
    table_name : str
        The claim table (partition key ``id``, string).
    client : DynamoDBClient
        A boto3 DynamoDB client (injected; tests pass a moto-backed one).
    ttl_seconds : int
        Lifetime of an item: ``expiration`` = now + ``ttl_seconds``.
    clock : Callable[[], float]
        Epoch seconds (default :func:`time.time`); injectable for lease tests.
    owner_factory : Callable[[], str]
        Makes the owner token of each attempt (default a uuid4).

    Examples
    --------
    >>> store = ClaimStore("claims", boto3.client("dynamodb"), ttl_seconds=604800)  # doctest: +SKIP
    >>> claim = store.claim(job, lease_ms=30_000)  # doctest: +SKIP
    >>> if claim.outcome is ClaimOutcome.ACQUIRED:  # doctest: +SKIP
    ...     run(job)
    ...     store.complete(job.id, claim.owner)
    """

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient,
        *,
        ttl_seconds: int,
        clock: Callable[[], float] = time.time,
        owner_factory: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.table_name = table_name
        self._client = client
        self._ttl_seconds = ttl_seconds
        self._clock = clock
        self._owner_factory = owner_factory

    def now_ms(self) -> int:
        """Return the store's clock in epoch milliseconds."""
        return int(self._clock() * 1000)

    def claim(self, job: Job, *, lease_ms: int) -> Claim:
        """Take the job's claim with one conditional PutItem.

        The put succeeds when no item exists, the item is FAILED (unless it failed permanently for
        this same message), the item is IN_FLIGHT under an expired lease, or the item's
        ``expiration`` has passed (TTL deletes late, so expired items are still read).

        Parameters
        ----------
        job : Job
            The job to claim.
        lease_ms : int
            Lease length; the caller passes the function's remaining time, so the lease never
            outlives the invocation.

        Returns
        -------
        Claim
            ``ACQUIRED`` with our owner token, or why not (``DUPLICATE``, ``CONFLICT``,
            ``KNOWN_POISON``) with the item found.
        """
        now_ms = self.now_ms()
        owner = self._owner_factory()
        lease = now_ms + max(0, lease_ms)
        item: dict[str, Any] = {
            ATTR_ID: {"S": job.id},
            ATTR_STATUS: {"S": STATUS_IN_FLIGHT},
            ATTR_GROUP: {"S": job.group},
            ATTR_TYPE: {"S": job.type},
            ATTR_OWNER: {"S": owner},
            ATTR_LEASE_EXPIRES_AT: {"N": str(lease)},
            ATTR_ATTEMPTS: {"N": str(job.attempt)},
            ATTR_UPDATED_AT: {"N": str(now_ms)},
            ATTR_EXPIRATION: {"N": str(now_ms // 1000 + self._ttl_seconds)},
            ATTR_MESSAGE_ID: {"S": job.message_id},
            ATTR_PERMANENT: {"BOOL": False},
        }
        existing = self._conditional_put(item, message_id=job.message_id, now_ms=now_ms)
        if existing is not None:
            return _refused(job.id, existing)
        return Claim(ClaimOutcome.ACQUIRED, job.id, owner=owner, lease_expires_at_ms=lease)

    def fail_malformed(self, job_id: str, *, group: str, message_id: str, attempt: int, error: str) -> Claim:
        """Record a malformed body that carries a usable ``jobId`` as a permanent FAILED claim.

        One conditional PutItem of the FAILED item itself, under the same condition as
        :meth:`claim`: an item that is SUCCEEDED, IN_FLIGHT under another worker's live lease, or
        already this message's permanent failure is never overwritten (the refusal says which).

        Parameters
        ----------
        job_id : str
            The body's ``jobId``.
        group, message_id : str
            The record's ``MessageGroupId`` and ``messageId``.
        attempt : int
            The record's ``ApproximateReceiveCount``.
        error : str
            Why the body is not a job (stored, cut to :data:`MAX_ERROR_LENGTH`).

        Returns
        -------
        Claim
            ``ACQUIRED`` when the FAILED item was written (taken and closed at once, so ``owner``
            is set and ``lease_expires_at_ms`` is ``None``); otherwise ``DUPLICATE``, ``CONFLICT``
            or ``KNOWN_POISON`` with the item found, left untouched.
        """
        now_ms = self.now_ms()
        owner = self._owner_factory()
        item: dict[str, Any] = {
            ATTR_ID: {"S": job_id},
            ATTR_STATUS: {"S": STATUS_FAILED},
            ATTR_GROUP: {"S": group},
            ATTR_OWNER: {"S": owner},
            ATTR_ATTEMPTS: {"N": str(attempt)},
            ATTR_UPDATED_AT: {"N": str(now_ms)},
            ATTR_EXPIRATION: {"N": str(now_ms // 1000 + self._ttl_seconds)},
            ATTR_MESSAGE_ID: {"S": message_id},
            ATTR_PERMANENT: {"BOOL": True},
            ATTR_ERROR: {"S": _truncate(error) or "(no message)"},
            ATTR_ERROR_TYPE: {"S": MalformedJobError.__name__},
        }
        existing = self._conditional_put(item, message_id=message_id, now_ms=now_ms)
        if existing is not None:
            return _refused(job_id, existing)
        return Claim(ClaimOutcome.ACQUIRED, job_id, owner=owner)

    def complete(self, job_id: str, owner: str) -> bool:
        """Mark the job SUCCEEDED if ``owner`` still holds it.

        Returns
        -------
        bool
            ``False`` when the fence failed: another worker took the claim over after our lease
            expired, and its state stands.
        """
        return self._fenced_update(
            job_id,
            owner,
            "SET #status = :succeeded, #updated_at = :now REMOVE #lease, #error, #error_type",
            {"#lease": ATTR_LEASE_EXPIRES_AT, "#error": ATTR_ERROR, "#error_type": ATTR_ERROR_TYPE},
            {":succeeded": {"S": STATUS_SUCCEEDED}},
        )

    def fail(self, job_id: str, owner: str, *, error: str, error_type: str, permanent: bool) -> bool:
        """Mark the job FAILED with its error if ``owner`` still holds it.

        A transient failure (``permanent=False``) can be claimed again at once by the retry; a
        permanent one is not run again for the same message (``KNOWN_POISON``).

        Returns
        -------
        bool
            ``False`` when the fence failed (another worker owns the claim now).
        """
        return self._fenced_update(
            job_id,
            owner,
            "SET #status = :failed, #updated_at = :now, #error = :error, #error_type = :error_type,"
            " #permanent = :permanent REMOVE #lease",
            {
                "#lease": ATTR_LEASE_EXPIRES_AT,
                "#error": ATTR_ERROR,
                "#error_type": ATTR_ERROR_TYPE,
                "#permanent": ATTR_PERMANENT,
            },
            {
                ":failed": {"S": STATUS_FAILED},
                ":error": {"S": _truncate(error) or "(no message)"},
                ":error_type": {"S": error_type},
                ":permanent": {"BOOL": permanent},
            },
        )

    def _conditional_put(
        self, item: dict[str, Any], *, message_id: str, now_ms: int
    ) -> dict[str, Any] | None:
        """PutItem under the claim condition; ``None`` when written, else the item found (decoded)."""
        try:
            self._client.put_item(
                TableName=self.table_name,
                Item=item,
                ConditionExpression=_CLAIM_CONDITION,
                ExpressionAttributeNames=_NAMES,
                ExpressionAttributeValues={
                    ":failed": {"S": STATUS_FAILED},
                    ":in_flight": {"S": STATUS_IN_FLIGHT},
                    ":true": {"BOOL": True},
                    ":mid": {"S": message_id},
                    ":now_ms": {"N": str(now_ms)},
                    ":now_s": {"N": str(now_ms // 1000)},
                },
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            return _decode(cast("dict[str, Any]", exc.response.get("Item") or {}))
        return None

    def _fenced_update(
        self,
        job_id: str,
        owner: str,
        update: str,
        names: dict[str, str],
        values: dict[str, Any],
    ) -> bool:
        try:
            self._client.update_item(
                TableName=self.table_name,
                Key={ATTR_ID: {"S": job_id}},
                UpdateExpression=update,
                ConditionExpression="#owner = :me",
                ExpressionAttributeNames={
                    "#owner": ATTR_OWNER,
                    "#status": ATTR_STATUS,
                    "#updated_at": ATTR_UPDATED_AT,
                    **names,
                },
                ExpressionAttributeValues={
                    ":me": {"S": owner},
                    ":now": {"N": str(self.now_ms())},
                    **values,
                },
            )
        except self._client.exceptions.ConditionalCheckFailedException:
            return False
        return True


def _refused(job_id: str, existing: dict[str, Any]) -> Claim:
    status = existing.get(ATTR_STATUS)
    lease = existing.get(ATTR_LEASE_EXPIRES_AT)
    lease_ms = int(lease) if isinstance(lease, int | float) else None
    if status == STATUS_SUCCEEDED:
        outcome = ClaimOutcome.DUPLICATE
    elif status == STATUS_FAILED:
        # The only FAILED item the condition refuses: permanent, for this same message.
        outcome = ClaimOutcome.KNOWN_POISON
    else:
        outcome = ClaimOutcome.CONFLICT
    return Claim(outcome, job_id, lease_expires_at_ms=lease_ms, existing=existing)


def _decode(item: dict[str, Any]) -> dict[str, Any]:
    """Decode the S, N and BOOL attributes of a low-level item (the only types the table holds)."""
    decoded: dict[str, Any] = {}
    for name, value in item.items():
        if "S" in value:
            decoded[name] = value["S"]
        elif "N" in value:
            number = float(value["N"])
            decoded[name] = int(number) if math.isfinite(number) and number.is_integer() else number
        elif "BOOL" in value:
            decoded[name] = bool(value["BOOL"])
    return decoded


def _truncate(text: str) -> str:
    return text if len(text) <= MAX_ERROR_LENGTH else text[: MAX_ERROR_LENGTH - 3] + "..."
