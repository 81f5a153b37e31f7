"""The claim table: one item per job, written before the side effect, fenced on its owner.

Item attributes: ``id`` (jobId), ``status`` (IN_FLIGHT | SUCCEEDED | FAILED | DEAD), ``group``,
``type``, ``owner`` (a uuid4 per attempt), ``lease_expires_at`` (epoch ms), ``attempts`` (runs
counted: the runtime's own count, see below), ``earlier_attempts`` (runs before an operator's reset,
rule 5), ``updated_at`` (epoch ms), ``expiration`` (epoch s, the TTL attribute; a DEAD item has none),
``message_id``, ``shared`` (true on the claim of a run that shares its process with other jobs' runs,
rule 7), ``fence`` (the run's fencing token: epoch ms of a new claim, above the last one's on a retake,
so a stale run's token is always below) and, on FAILED and DEAD, ``error``,
``error_type`` and (DEAD) ``dead_reason``; on SUCCEEDED, ``result``: the job function's return value
(:mod:`constructs_fifo.runtime.claim.result`), written by the same fenced UpdateItem: no extra call.

Rules, one condition each:

1. **New job.** One ``PutItem`` of an IN_FLIGHT item with ``attempts = 1`` on condition that no item
   exists or the item's ``expiration`` has passed (TTL deletes late, so the condition compares times
   itself). ``ReturnValuesOnConditionCheckFailure=ALL_OLD`` tells the loser why at no extra cost.
2. **Refused.** ``SUCCEEDED`` is a duplicate; ``DEAD`` is a job already dead (a copy follows it);
   ``IN_FLIGHT`` under a live lease is another worker's run (a conflict). ``FAILED``, or ``IN_FLIGHT``
   under an expired lease (the worker crashed), is taken again by rule 3 unless the job has used all
   its attempts: then it is ``EXHAUSTED`` and the caller declares it dead without running it (a crash
   on the last attempt counts as that attempt).
3. **Retake.** A second ``PutItem`` with ``attempts`` = the old count + 1 (or the old count, rule 7),
   on condition that the owner, status and ``shared`` mark are still those read in rule 2: of two
   workers retaking the same item, one wins.
4. **Fenced writes.** ``SUCCEEDED``, ``FAILED`` and ``DEAD`` are written on condition that ``owner``
   is still this attempt's token, and that the claim is still ``IN_FLIGHT`` or ``FAILED``: a worker
   whose lease expired cannot overwrite the worker that took over, and a SUCCEEDED or DEAD claim is
   final (an ``EXHAUSTED`` claim is declared dead on the token of the worker that held it, which may
   have been running past its lease and succeeded meanwhile).
5. **Dead stays dead.** A DEAD item has no ``expiration``, so no copy of the job runs again until an
   operator calls :meth:`ClaimStore.reset`: one ``UpdateItem`` on condition that it is DEAD makes it
   FAILED with no attempts used and a new owner token, its runs kept as ``earlier_attempts`` and its
   error kept; the next copy retakes it by rule 3 as attempt 1, carrying ``earlier_attempts``, so
   ``jobs show`` keeps the job's failed history.
6. **Cancelled stays cancelled.** A ``CANCELLED`` item (written by a canceller,
   :mod:`~constructs_fifo.runtime.claim.cancel`, with an owner token of its own) refuses rule 1 and
   rule 3 (``CANCELLED``: the record is deleted, not run) and every fenced write of the attempt it
   replaced (rule 4 and ``renew``): the cancel costs the runtime nothing it did not already call.
7. **A crash is counted against the job that caused it only.** A lease that ran out (the worker
   crashed, or stopped answering) is counted as an attempt only when its run was **alone** in its
   process: Lambda's invocation runs one job at a time, and so does a worker's isolated run. A worker
   that runs several jobs at once (slots) claims with ``shared`` (``shared_runs``): such a run's lease
   that ran out is not counted (the crash may be a slot-mate's) and is not ``EXHAUSTED``; the retake
   keeps the attempt number. Every retake after a lease ran out says so (:attr:`Claim.after_crash`),
   and the worker runs the job alone (:mod:`constructs_fifo.worker.claims`: ``shared`` removed), so
   its next crash is its own and counted.

Why the runtime counts attempts instead of reading ``ApproximateReceiveCount``: SQS raises the
receive count of every record it returns, including the records behind a failing job that were
reported without running. Counting runs started in the claim means only a job's own runs count.

Call budget: a new job that succeeds costs two DynamoDB calls (rule 1 and the fenced ``SUCCEEDED``);
a duplicate one (rule 1's ALL_OLD); a retry of a failed job one more than a new job (rule 3); on a
worker of several slots, a retake after a crash one more again (rule 7's isolation).
"""

from __future__ import annotations

import enum
import functools
import math
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.constants import (
    ATTR_ATTEMPTS,
    ATTR_DEAD_REASON,
    ATTR_EARLIER_ATTEMPTS,
    ATTR_ERROR,
    ATTR_ERROR_TYPE,
    ATTR_EXPIRATION,
    ATTR_FENCE,
    ATTR_GROUP,
    ATTR_ID,
    ATTR_LEASE_EXPIRES_AT,
    ATTR_MESSAGE_ID,
    ATTR_OWNER,
    ATTR_PERMANENT,
    ATTR_RESULT,
    ATTR_RESULT_NOT_STORED,
    ATTR_SHARED,
    ATTR_STATUS,
    ATTR_TYPE,
    ATTR_UPDATED_AT,
    DEFAULT_CLAIM_TTL_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    STATUS_DEAD,
    STATUS_FAILED,
    STATUS_IN_FLIGHT,
    STATUS_SUCCEEDED,
    DeadReason,
)
from constructs_fifo.runtime.error_text import truncate_error
from constructs_fifo.runtime.payloads.pointer import ATTR_RESULT_POINTER
from constructs_fifo.runtime.steering.names import (
    STATUS_CANCELLED,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from constructs_fifo.runtime.job import Job

__all__ = ["Claim", "ClaimOutcome", "ClaimStore", "decode_claim"]

# Every attribute goes through a placeholder: status, group, type and owner are DynamoDB reserved words.
_NAMES = {
    "#id": ATTR_ID,
    "#status": ATTR_STATUS,
    "#owner": ATTR_OWNER,
    "#lease": ATTR_LEASE_EXPIRES_AT,
    "#expiration": ATTR_EXPIRATION,
    "#updated_at": ATTR_UPDATED_AT,
    "#error": ATTR_ERROR,
    "#error_type": ATTR_ERROR_TYPE,
    "#reason": ATTR_DEAD_REASON,
    "#result": ATTR_RESULT,
    "#attempts": ATTR_ATTEMPTS,
    "#earlier": ATTR_EARLIER_ATTEMPTS,
    "#permanent": ATTR_PERMANENT,
    "#not_stored": ATTR_RESULT_NOT_STORED,
    "#result_pointer": ATTR_RESULT_POINTER,
    "#shared": ATTR_SHARED,
}
_NEW_CONDITION = "attribute_not_exists(#id) OR #expiration < :now_s"
_RETAKE_CONDITION = "#owner = :old_owner AND #status = :old_status"
# Rule 4's "still IN_FLIGHT or FAILED", written as "neither final status" so that ``complete`` and
# ``mark_dead`` reuse the value they set: each AttributeValue sent costs the client CPU on every call.
_FENCE_CONDITION = "#owner = :me AND #status <> :succeeded AND #status <> :dead"
_RENEW_CONDITION = "#owner = :me AND #status = :in_flight AND #lease >= :now"
_MALFORMED_CONDITION = (
    "attribute_not_exists(#id) OR #expiration < :now_s OR #status = :failed"
    " OR (#status = :in_flight AND #lease < :now_ms)"
)


class ClaimOutcome(enum.Enum):
    """What :meth:`ClaimStore.claim` found."""

    #: The claim is ours: run the job (``Claim.attempt`` is this run's number).
    ACQUIRED = "ACQUIRED"
    #: The job already SUCCEEDED: skip it and let its message be deleted.
    DUPLICATE = "DUPLICATE"
    #: Another worker holds a live IN_FLIGHT lease: retry later, do not run.
    CONFLICT = "CONFLICT"
    #: The job is DEAD (an earlier copy died): do not run; this copy follows it.
    DEAD = "DEAD"
    #: The job used all its attempts (the last one crashed or failed): declare it dead, do not run.
    EXHAUSTED = "EXHAUSTED"
    #: The job was cancelled (:mod:`~constructs_fifo.runtime.claim.cancel`): do not run; delete it.
    CANCELLED = "CANCELLED"


@dataclass(frozen=True)
class Claim:
    """The result of one claim attempt.

    Attributes
    ----------
    outcome : ClaimOutcome
        What happened.
    job_id : str
        The job's id.
    attempt : int
        Runs of the job started so far, this one included when ``ACQUIRED``.
    owner : str or None
        The owner token that fences later writes: ours when ``ACQUIRED``, the crashed worker's when
        ``EXHAUSTED`` (pass it to :meth:`ClaimStore.mark_dead`).
    lease_expires_at_ms : int or None
        The lease end: ours when ``ACQUIRED``, the other worker's when ``CONFLICT``.
    existing : dict or None
        The item found when the claim was refused, decoded to plain Python values.
    after_crash : bool
        ``ACQUIRED`` by retaking a claim whose lease ran out: the job's last run ended without a word
        (a crash, or a worker that stopped answering). A worker runs it alone (rule 7).
    fence : int
        ``ACQUIRED``: this run's fencing token, above every earlier run's of the job.
    """

    outcome: ClaimOutcome
    job_id: str
    attempt: int = 0
    owner: str | None = None
    lease_expires_at_ms: int | None = None
    existing: dict[str, Any] | None = None
    after_crash: bool = False
    fence: int = 0


class ClaimStore:
    """Claims, completes, fails, kills and resets jobs in the claim table.

    Parameters
    ----------
    table_name : str
        The claim table (partition key ``id``, string).
    client : DynamoDBClient or None
        A boto3 DynamoDB client (injected; tests pass a moto-backed one). ``None``: one from boto3's
        default session, so an operator can write ``ClaimStore(claim_table).reset(job_id)``.
    ttl_seconds : int
        Lifetime of an item: ``expiration`` = now + ``ttl_seconds`` (DEAD items do not expire). The
        runtime passes the queue's ``claim_ttl``; the default is the construct's default,
        ``DEFAULT_CLAIM_TTL_SECONDS`` (``reset`` and ``get`` do not use it).
    max_attempts : int
        Runs a job may start; past them a failed or crashed job is ``EXHAUSTED``.
    clock : Callable[[], float]
        Epoch seconds (default :func:`time.time`); injectable for lease tests.
    owner_factory : Callable[[], str]
        Makes the owner token of each attempt (default a uuid4).
    shared_runs : bool
        The runs claimed share their process with other jobs' runs (a worker of several slots): their
        claims carry ``shared`` (rule 7). Default ``False``: a run alone, as in a Lambda invocation.

    Examples
    --------
    >>> store = ClaimStore("claims", boto3.client("dynamodb"), ttl_seconds=604800)  # doctest: +SKIP
    >>> ClaimStore("claims").reset("job-17")  # an operator: run a DEAD job again  # doctest: +SKIP
    True
    >>> claim = store.claim(job, lease_ms=30_000)  # doctest: +SKIP
    >>> if claim.outcome is ClaimOutcome.ACQUIRED:  # doctest: +SKIP
    ...     run(job)
    ...     store.complete(job.id, claim.owner)
    """

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient | None = None,
        *,
        ttl_seconds: int = DEFAULT_CLAIM_TTL_SECONDS,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        clock: Clock = system_clock,
        owner_factory: Callable[[], str] = lambda: str(uuid.uuid4()),
        shared_runs: bool = False,
    ) -> None:
        if client is None:
            import boto3  # noqa: PLC0415 - only when no client was injected

            client = boto3.client("dynamodb")
        self.table_name = table_name
        self.max_attempts = max_attempts
        self._client = client
        self._ttl_seconds = ttl_seconds
        self._clock = clock
        #: The client, lifetime and clock, for what writes this table beside the store (a canceller).
        self.client, self.ttl_seconds, self.clock = client, ttl_seconds, clock
        self._owner_factory = owner_factory
        self.shared_runs = shared_runs

    def now_ms(self) -> int:
        """Return the store's clock in epoch milliseconds."""
        return epoch_ms(self._clock)

    def claim(self, job: Job, *, lease_ms: int) -> Claim:
        """Take the job's claim (rules 1 to 3 of the module docstring).

        Parameters
        ----------
        job : Job
            The job (its id, group, type and message id are stored on the item; its ``attempt`` is
            not read: the item counts attempts).
        lease_ms : int
            Lease length; the caller passes the function's remaining time, so the lease never
            outlives the invocation.

        Returns
        -------
        Claim
            ``ACQUIRED`` with our owner token and the attempt number, or why not (``DUPLICATE``,
            ``CONFLICT``, ``DEAD``, ``EXHAUSTED``) with the item found.
        """
        job_id = job.id
        now_ms = self.now_ms()
        owner = self._owner_factory()
        lease = now_ms + max(0, lease_ms)
        item: dict[str, Any] = {
            ATTR_ID: {"S": job_id},
            ATTR_STATUS: {"S": STATUS_IN_FLIGHT},
            ATTR_GROUP: {"S": job.group},
            ATTR_TYPE: {"S": job.type},
            ATTR_OWNER: {"S": owner},
            ATTR_LEASE_EXPIRES_AT: {"N": str(lease)},
            ATTR_ATTEMPTS: {"N": "1"},
            ATTR_UPDATED_AT: {"N": str(now_ms)},
            ATTR_EXPIRATION: {"N": str(now_ms // 1000 + self._ttl_seconds)},
            ATTR_MESSAGE_ID: {"S": job.message_id},
            ATTR_FENCE: {"N": str(now_ms)},
        }
        if self.shared_runs:
            item[ATTR_SHARED] = {"BOOL": True}
        existing = self._put(item, _NEW_CONDITION, {":now_s": {"N": str(now_ms // 1000)}})
        if existing is None:
            return Claim(
                ClaimOutcome.ACQUIRED, job_id, attempt=1, owner=owner, lease_expires_at_ms=lease, fence=now_ms
            )
        refused = self._classify(job_id, existing, now_ms)
        if refused is not None:
            return refused
        # Rule 3: FAILED, or IN_FLIGHT under an expired lease, with attempts left (rule 7: a shared run's
        # lease that ran out is not counted).
        after_crash = existing.get(ATTR_STATUS) == STATUS_IN_FLIGHT
        attempt = _attempts(existing) + (0 if after_crash and existing.get(ATTR_SHARED) is True else 1)
        item[ATTR_ATTEMPTS] = {"N": str(attempt)}
        old_fence = existing.get(ATTR_FENCE)
        fence = max(now_ms, int(old_fence) + 1 if isinstance(old_fence, int | float) else 0)
        item[ATTR_FENCE] = {"N": str(fence)}
        earlier = existing.get(ATTR_EARLIER_ATTEMPTS)
        if isinstance(earlier, int | float) and earlier:  # the runs before a reset (rule 5) stay counted
            item[ATTR_EARLIER_ATTEMPTS] = {"N": str(int(earlier))}
        # The shared mark read too: its holder's isolate (rule 7), sent while its lease was live and
        # landing after this read, makes this retake fail and read again (the run was alone: counted).
        shared_read = existing.get(ATTR_SHARED) is True
        shared_condition = "#shared = :shared" if shared_read else "attribute_not_exists(#shared)"
        found = self._put(
            item,
            f"{_RETAKE_CONDITION} AND {shared_condition}",
            {
                ":old_owner": {"S": str(existing.get(ATTR_OWNER, ""))},
                ":old_status": {"S": str(existing.get(ATTR_STATUS, ""))},
                **({":shared": {"BOOL": True}} if shared_read else {}),
            },
        )
        if found is None:
            return Claim(
                ClaimOutcome.ACQUIRED,
                job_id,
                attempt=attempt,
                owner=owner,
                lease_expires_at_ms=lease,
                after_crash=after_crash,
                fence=fence,
            )
        # Another worker retook it between our two calls: whatever it holds now is a live claim.
        return self._classify(job_id, found, now_ms) or _conflict(job_id, found)

    def complete(
        self,
        job_id: str,
        owner: str,
        *,
        result_json: str | None = None,
        result_not_stored: str | None = None,
        result_pointer: str | None = None,
    ) -> bool:
        """Mark the job SUCCEEDED if ``owner`` still holds it, with its result.

        ``result_json`` is :func:`~constructs_fifo.runtime.claim.result.encode_result`'s JSON, or
        ``None`` to store none; ``result_not_stored`` its reason for storing none (not JSON, too large),
        stored so the waiter's outcome says it; ``result_pointer`` the payload bucket's pointer to a
        result too large for the claim (``large_payloads``).

        Returns
        -------
        bool
            ``False`` when the fence failed: another worker took the claim over after our lease
            expired, and its state stands.
        """
        values: dict[str, Any] = {}
        result = ""
        if result_json is not None:
            values[":result"] = {"S": result_json}
            result = ", #result = :result"
        if result_not_stored is not None:
            values[":not_stored"] = {"S": truncate_error(result_not_stored)}
            result += ", #not_stored = :not_stored"
        if result_pointer is not None:
            values[":result_pointer"] = {"S": result_pointer}
            result += ", #result_pointer = :result_pointer"
        return self._fenced_update(
            job_id,
            owner,
            f"SET #status = :succeeded, #updated_at = :now{result} REMOVE #lease, #error, #error_type",
            values,
        )

    def fail(self, job_id: str, owner: str, *, error: str, error_type: str) -> bool:
        """Mark the job FAILED (transient: the retry takes it again) if ``owner`` still holds it.

        Returns
        -------
        bool
            ``False`` when the fence failed (another worker owns the claim now).
        """
        return self._fenced_update(
            job_id,
            owner,
            "SET #status = :failed, #updated_at = :now, #error = :error, #error_type = :error_type"
            " REMOVE #lease",
            {
                ":failed": {"S": STATUS_FAILED},
                ":error": {"S": truncate_error(error)},
                ":error_type": {"S": error_type},
            },
        )

    def mark_dead(self, job_id: str, owner: str, *, reason: DeadReason, error: str, error_type: str) -> bool:
        """Mark the job DEAD if ``owner`` still holds it; the item loses its ``expiration``.

        ``owner`` is this attempt's token, or for an ``EXHAUSTED`` claim the crashed worker's token
        (:attr:`Claim.owner`), so two workers cannot both declare one job dead; and a worker that
        held that token past its lease and succeeded meanwhile keeps its SUCCEEDED (rule 4).

        Returns
        -------
        bool
            ``False`` when the fence failed (another worker owns the claim now).
        """
        return self._fenced_update(
            job_id,
            owner,
            "SET #status = :dead, #updated_at = :now, #error = :error, #error_type = :error_type,"
            " #reason = :reason REMOVE #lease, #expiration",
            {
                ":error": {"S": truncate_error(error)},
                ":error_type": {"S": error_type},
                ":reason": {"S": reason.value},
            },
        )

    def renew(self, job_id: str, owner: str, *, lease_ms: int) -> bool:
        """Move ``owner``'s live IN_FLIGHT lease to ``lease_ms`` from now (a heartbeat; ``0`` releases it,
        the next claim counting the run); ``False``: another worker holds the claim or the lease ran out."""
        now_ms = self.now_ms()
        values = {":me": {"S": owner}, ":in_flight": {"S": STATUS_IN_FLIGHT}, ":now": {"N": str(now_ms)}}
        try:
            self._client.update_item(
                TableName=self.table_name,
                Key={ATTR_ID: {"S": job_id}},
                UpdateExpression="SET #lease = :lease, #updated_at = :now",
                ConditionExpression=_RENEW_CONDITION,
                ExpressionAttributeNames=_names_in(f"#updated_at {_RENEW_CONDITION}"),
                ExpressionAttributeValues={**values, ":lease": {"N": str(now_ms + max(0, lease_ms))}},
            )
        except self._client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def mark_malformed_dead(self, job_id: str, *, group: str, message_id: str, error: str) -> Claim:
        """Record a malformed body that carries a usable ``jobId`` as a DEAD claim (one PutItem).

        The item is written when none exists (or it expired), when it is FAILED, or IN_FLIGHT under
        an expired lease; a SUCCEEDED or DEAD item, or another worker's live lease, is left untouched
        and returned (the record is dead either way: its body cannot be run).
        """
        now_ms = self.now_ms()
        item: dict[str, Any] = {
            ATTR_ID: {"S": job_id},
            ATTR_STATUS: {"S": STATUS_DEAD},
            ATTR_GROUP: {"S": group},
            ATTR_OWNER: {"S": self._owner_factory()},
            ATTR_ATTEMPTS: {"N": "0"},
            ATTR_UPDATED_AT: {"N": str(now_ms)},
            ATTR_MESSAGE_ID: {"S": message_id},
            ATTR_ERROR: {"S": truncate_error(error)},
            ATTR_ERROR_TYPE: {"S": "MalformedJobError"},
            ATTR_DEAD_REASON: {"S": DeadReason.MALFORMED.value},
        }
        existing = self._put(
            item,
            _MALFORMED_CONDITION,
            {
                ":now_s": {"N": str(now_ms // 1000)},
                ":now_ms": {"N": str(now_ms)},
                ":failed": {"S": STATUS_FAILED},
                ":in_flight": {"S": STATUS_IN_FLIGHT},
            },
        )
        if existing is None:
            return Claim(ClaimOutcome.DEAD, job_id)
        return self._classify(job_id, existing, now_ms) or _conflict(job_id, existing)

    def reset(self, job_id: str) -> bool:
        """Let a DEAD job run again (an operator's explicit decision): rule 5 of the module docstring.

        Returns
        -------
        bool
            ``False`` when the item is missing or not DEAD (nothing was changed).
        """
        now_ms = self.now_ms()
        try:
            self._client.update_item(
                TableName=self.table_name,
                Key={ATTR_ID: {"S": job_id}},
                # the runs so far move to earlier_attempts first (every operand reads the item as it
                # was, on DynamoDB; the order keeps it so on an emulator that applies them in turn)
                UpdateExpression="SET #earlier = if_not_exists(#earlier, :zero)"
                " + if_not_exists(#attempts, :zero), #attempts = :zero, #status = :failed,"
                " #owner = :owner, #updated_at = :now, #expiration = :expiration REMOVE #reason, #permanent",
                ConditionExpression="#status = :dead",
                ExpressionAttributeNames=_names_in(
                    "#earlier #attempts #status #owner #updated_at #expiration #reason #permanent"
                ),
                ExpressionAttributeValues={
                    ":dead": {"S": STATUS_DEAD},
                    ":failed": {"S": STATUS_FAILED},
                    ":zero": {"N": "0"},
                    ":owner": {"S": self._owner_factory()},
                    ":now": {"N": str(now_ms)},
                    ":expiration": {"N": str(now_ms // 1000 + self._ttl_seconds)},
                },
            )
        except self._client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def get(self, job_id: str) -> dict[str, Any] | None:
        """Read one claim item (consistent), decoded; ``None`` when there is none."""
        response = self._client.get_item(
            TableName=self.table_name, Key={ATTR_ID: {"S": job_id}}, ConsistentRead=True
        )
        item = response.get("Item")
        return decode_claim(cast("dict[str, Any]", item)) if item else None

    # --- helpers ----------------------------------------------------------------------------------

    def _classify(self, job_id: str, existing: dict[str, Any], now_ms: int) -> Claim | None:
        """Rule 2: the refusal an item means, or ``None`` when rule 3 may retake it."""
        status = existing.get(ATTR_STATUS)
        attempts = _attempts(existing)
        owner = str(existing.get(ATTR_OWNER, "")) or None
        if status == STATUS_SUCCEEDED:
            return Claim(ClaimOutcome.DUPLICATE, job_id, attempt=attempts, existing=existing)
        if status == STATUS_CANCELLED:
            return Claim(ClaimOutcome.CANCELLED, job_id, attempt=attempts, existing=existing)
        # A FAILED item marked permanent was written by runtime 0.1, before DEAD existed.
        if status == STATUS_DEAD or (status == STATUS_FAILED and existing.get(ATTR_PERMANENT) is True):
            return Claim(ClaimOutcome.DEAD, job_id, attempt=attempts, existing=existing)
        lease = existing.get(ATTR_LEASE_EXPIRES_AT)
        lease_ms = int(lease) if isinstance(lease, int | float) else None
        if status == STATUS_IN_FLIGHT and lease_ms is not None and lease_ms >= now_ms:
            return _conflict(job_id, existing)
        if status == STATUS_IN_FLIGHT and existing.get(ATTR_SHARED) is True:
            return None  # rule 7: a shared run's crash is not counted, so it used no attempt
        if attempts >= self.max_attempts:
            return Claim(ClaimOutcome.EXHAUSTED, job_id, attempt=attempts, owner=owner, existing=existing)
        return None

    def _put(self, item: dict[str, Any], condition: str, values: dict[str, Any]) -> dict[str, Any] | None:
        """PutItem under ``condition``; ``None`` when written, else the item found (decoded)."""
        try:
            self._client.put_item(
                TableName=self.table_name,
                Item=item,
                ConditionExpression=condition,
                ExpressionAttributeNames=_names_in(condition),
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            return decode_claim(cast("dict[str, Any]", exc.response.get("Item") or {}))
        return None

    def _fenced_update(self, job_id: str, owner: str, update: str, values: dict[str, Any]) -> bool:
        try:
            self._client.update_item(
                TableName=self.table_name,
                Key={ATTR_ID: {"S": job_id}},
                UpdateExpression=update,
                ConditionExpression=_FENCE_CONDITION,
                ExpressionAttributeNames=_names_in(f"{update} {_FENCE_CONDITION}"),
                ExpressionAttributeValues={
                    ":me": {"S": owner},
                    ":succeeded": {"S": STATUS_SUCCEEDED},
                    ":dead": {"S": STATUS_DEAD},
                    ":now": {"N": str(self.now_ms())},
                    **values,
                },
            )
        except self._client.exceptions.ConditionalCheckFailedException:
            return False
        return True


def _names_in(expression: str) -> dict[str, str]:
    """The placeholders an expression uses (DynamoDB refuses unused ones); a fresh dict per call.

    The store's expressions are a handful of constants, so each is read once (:func:`_placeholders`).
    """
    return dict(_placeholders(expression))


@functools.cache
def _placeholders(expression: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, _NAMES[name]) for name in sorted(set(re.findall(r"#\w+", expression))))


def _conflict(job_id: str, existing: dict[str, Any]) -> Claim:
    lease = existing.get(ATTR_LEASE_EXPIRES_AT)
    lease_ms = int(lease) if isinstance(lease, int | float) else None
    return Claim(
        ClaimOutcome.CONFLICT,
        job_id,
        attempt=_attempts(existing),
        lease_expires_at_ms=lease_ms,
        existing=existing,
    )


def _attempts(item: dict[str, Any]) -> int:
    value = item.get(ATTR_ATTEMPTS)
    return int(value) if isinstance(value, int | float) else 0


def decode_claim(item: dict[str, Any]) -> dict[str, Any]:
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
