"""Operating parked groups: list them, read what they keep, resume them (retrying or skipping the dead job).

Under the PARK policy a group whose job died stops there; the dead job and every later job of the
group are kept, in order, in the queue's group table (see :mod:`constructs_fifo.runtime.dead_jobs.parking`).
Resuming replays them first and in order, before anything sent later:

* ``resume(group)`` retries the dead job: its DEAD claim is reset, so it runs again (fix the cause
  first: a job that fails the same way parks the group again);
* ``resume(group, skip_dead=True)`` sends the dead job to the dead-letter queue (its group, body and
  triage attributes) and replays the rest.

Either way the header becomes ``RESUMING`` (recording the choice in ``skip_dead``) and a wake-up
message goes to the source queue in the group, so the runtime replays the kept jobs even when nothing
else arrives.

State mode (a queue without a claim table: leave ``claim_table`` out) works the same way, with two
differences the runtime takes care of: the dead job's death is recorded in the group's state item, and
the runtime forgets it (retry) or consumes its ``seq`` (skip) when it replays the group, reading the
header's ``skip_dead``; and a dead job that died waiting in the reorder buffer has no kept record, so
on skip the runtime sends it to the dead-letter queue from the buffer.

Examples
--------
>>> groups = ParkedGroups(group_table="...", claim_table="...", queue_url="...",  # doctest: +SKIP
...                       dead_letter_queue_url="...")
>>> [(g.group, g.dead_job_id) for g in groups.list_groups()]  # doctest: +SKIP
[('ws#42', 'job-17')]
>>> groups.resume("ws#42", skip_dead=True)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from constructs_fifo.client.environment import default_client, environment_errors
from constructs_fifo.client.errors import ProducerError
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DEFAULT_CLAIM_TTL_SECONDS
from constructs_fifo.runtime.dead_jobs.letters import DeadLetter, DeadLetterSender
from constructs_fifo.runtime.dead_jobs.parking import (
    PARKED,
    RESUMING,
    KeptRecord,
    ParkHeader,
    ParkStore,
    wake_up_message,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["GroupNotParkedError", "ParkedGroups", "ResumeResult"]


class GroupNotParkedError(ProducerError, LookupError):
    """The group has no park header: it is live (never parked, or already resumed)."""


@dataclass(frozen=True)
class ResumeResult:
    """What :meth:`ParkedGroups.resume` did.

    Attributes
    ----------
    group : str
        The group.
    skipped_job_id : str or None
        The ``jobId`` of the dead job skipped (``skip_dead=True``): sent to the dead-letter queue by
        this call, by an earlier call that failed after the send, or (state mode, a dead job in the
        reorder buffer) by the runtime when it replays the group. ``None`` when retried, and also when
        the skipped message had no usable ``jobId`` (a malformed body): ``skipped_message_id`` tells.
    claim_reset : bool
        Whether the dead job's DEAD claim was reset so it runs again (always ``False`` without a claim
        table: in state mode the runtime forgets the death when it replays the group).
    wake_up_message_id : str
        The wake-up message sent to the source queue.
    skipped_message_id : str or None
        The ``messageId`` of the message skipped: set exactly when this call skipped the dead job
        (``None`` when retried, or when the group was already resuming and nothing was decided).
    """

    group: str
    skipped_job_id: str | None
    claim_reset: bool
    wake_up_message_id: str
    skipped_message_id: str | None = None


class ParkedGroups:
    """Lists, inspects and resumes the parked groups of one ``OrderedAgentQueue``.

    Parameters
    ----------
    group_table : str
        The construct's ``group_table`` name.
    claim_table : str or None
        Claim mode: the construct's ``claim_table`` name (a retried dead job's claim is reset). State
        mode has no claim table: leave it out.
    queue_url, dead_letter_queue_url : str
        The construct's queue and dead-letter queue.
    dynamodb, sqs : boto3 clients, optional
        Default: new clients in ``AWS_REGION`` or boto3's region (:mod:`constructs_fifo.client.environment`).
    clock : Callable[[], float]
        Epoch seconds (tests inject one).
    """

    def __init__(
        self,
        *,
        group_table: str,
        claim_table: str | None = None,
        queue_url: str,
        dead_letter_queue_url: str,
        dynamodb: DynamoDBClient | None = None,
        sqs: SQSClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if dynamodb is None:
            dynamodb = default_client("dynamodb", "ParkedGroups", argument="dynamodb")
        if sqs is None:
            sqs = default_client("sqs", "ParkedGroups", argument="sqs")
        self._sqs = sqs
        self._queue_url = queue_url
        self._store = ParkStore(group_table, dynamodb, clock=clock)
        self._claims = (
            ClaimStore(claim_table, dynamodb, ttl_seconds=DEFAULT_CLAIM_TTL_SECONDS, clock=clock)
            if claim_table
            else None
        )
        self._dead_letters = DeadLetterSender(sqs, dead_letter_queue_url, clock=clock)

    def list_groups(self) -> list[ParkHeader]:
        """Every parked or resuming group (a Scan of the group table), by group."""
        with environment_errors(f"the parked groups were not listed from table {self._store.table_name!r}"):
            return self._store.parked()

    def get(self, group: str) -> ParkHeader | None:
        """One group's header, or ``None`` when it is not parked."""
        with environment_errors(f"group {group!r} was not read from table {self._store.table_name!r}"):
            return self._store.header(group)

    def kept(self, group: str, *, limit: int = 25) -> list[KeptRecord]:
        """The first ``limit`` kept records of ``group``, oldest (the dead job) first."""
        with environment_errors(f"group {group!r} was not read from table {self._store.table_name!r}"):
            return self._store.kept(group, limit=limit)

    def resume(self, group: str, *, skip_dead: bool = False) -> ResumeResult:
        """Resume ``group``: retry its dead job, or send it to the dead-letter queue and go on.

        Raises
        ------
        GroupNotParkedError
            The group is not parked.
        ParkConflictError
            The runtime changed the header meanwhile; call again.
        ProducerEnvironmentError
            No credentials or no connection.
        """
        with environment_errors(f"group {group!r} was not resumed"):
            return self._resume(group, skip_dead=skip_dead)

    def _resume(self, group: str, *, skip_dead: bool = False) -> ResumeResult:
        """One :meth:`resume`, the environment's errors left to it."""
        header = self._store.header(group)
        if header is None:
            raise GroupNotParkedError(
                f"group {group!r} is not parked (no header in the group table); list the parked groups "
                "with ParkedGroups.list_groups() and resume one of those"
            )
        skipped: str | None = None
        skipped_message: str | None = None
        reset = False
        if header.status == PARKED:
            job_id = header.dead_job_id
            if skip_dead:
                done = self._skip_head(header)
                skipped, skipped_message = job_id, header.dead_message_id
            else:
                done = []
                reset = job_id is not None and self._claims is not None and self._claims.reset(job_id)
            self._store.advance(header, done=done, status=RESUMING, retry_at_ms=0, skip_dead=skip_dead)
        response = self._sqs.send_message(**wake_up_message(self._queue_url, group))
        return ResumeResult(group, skipped, reset, str(response.get("MessageId", "")), skipped_message)

    def _skip_head(self, header: ParkHeader) -> list[KeptRecord]:
        """Send the dead job (the first kept record) to the dead-letter queue; return it to delete."""
        dead = header.dead
        # The dead job is the first kept record, or the second behind a job put first (run_first).
        head = [
            k for k in self._store.kept(header.group, limit=2) if k.record.get("messageId") == dead.message_id
        ]
        if not head:
            # Already skipped by an earlier call that failed after the send, or (state mode) a dead
            # job of the reorder buffer, which has no kept record: the runtime sends that one.
            return []
        record = head[0].record
        dead = replace(
            dead,
            job_id=_job_id(record.get("body", "")) or dead.job_id,
            message_id=str(record.get("messageId", "")),
            at_ms=dead.at_ms or self._dead_letters.now_ms(),
        )
        self._dead_letters.send(DeadLetter(body=str(record.get("body", "")), group=header.group, dead=dead))
        return head


def _job_id(body: str) -> str | None:
    try:
        decoded = json.loads(body)
    except ValueError:
        return None
    job_id = decoded.get("jobId") if isinstance(decoded, dict) else None
    return job_id if isinstance(job_id, str) and job_id else None
