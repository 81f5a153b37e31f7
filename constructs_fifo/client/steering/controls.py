"""Steer jobs already sent: cancel a job, hold, release, cancel a group, run a fix first, the newest wins.

A caller that queued a job (an MCP server whose client sent ``notifications/cancelled``, an agent
stopped by its user) cancels it::

    steering = JobSteering(claim_table="MyStack-Claims1234")
    report = steering.cancel("job-17", reason="notifications/cancelled", by="mcp-session-9")
    if report.outcome is CancelOutcome.NOT_STARTED:
        ...  # it will never run

What a cancel means, and what it may not promise, per mode:

* **Claim mode** (a ``claim_table``): the rules are
  :mod:`constructs_fifo.runtime.claim.cancel`'s. ``NOT_STARTED``: no attempt started, none ever will.
  ``STOPPED``: an attempt started; no further one runs, and a running one's result is not recorded
  (a container worker's run is told through ``context.cancelled`` within one heartbeat interval; a
  function on Lambda runs to its end): its effect may have happened. Refused: ``SUCCEEDED``,
  ``DEAD``. A job kept behind a parked group is cancelled the same way: the group's resume deletes
  it without running it.
* **State mode** (no ``claim_table``, ``group`` required): the rules are
  :mod:`constructs_fifo.runtime.state.storage.cancels`'. A transition is pure, so a cancel either finds
  the job applied (``SUCCEEDED``, refused) or it is never applied (``NOT_STARTED``). A job with a
  ``seq`` needs its ``seq``.

A cancelled job's outcome (``JobOutcomes``) is ``cancelled``, with who, why and when; ``wait`` ends
on it; it never reaches the dead-letter queue; its record is deleted and its group goes on.
The caller needs the construct's ``grant_steer`` (a producer with ``grant_send`` cannot cancel).
"""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from constructs_fifo.client.errors import SteeringQueryError, SteeringWriteError
from constructs_fifo.client.producer import JobMessage, JobProducer, build_body, message_attributes
from constructs_fifo.client.results import SendResult
from constructs_fifo.client.steering.group_cancel import cancel_live_group
from constructs_fifo.runtime.claim.cancel import ClaimCanceller
from constructs_fifo.runtime.claim.supersede import Supersession
from constructs_fifo.runtime.constants import (
    DEFAULT_CLAIM_TTL_SECONDS,
    GROUP_ATTR_GROUP,
    GROUP_ATTR_SK,
    STATE_ATTR_VERSION,
    STATE_SK,
    DeadReason,
)
from constructs_fifo.runtime.dead_jobs.park_records import encode_kept
from constructs_fifo.runtime.dead_jobs.parking import (
    CANCELLING,
    HELD,
    PARKED,
    RESUMING,
    KeptRecord,
    ParkHeader,
    ParkStore,
    wake_up_message,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.exceptions import ParkConflictError
from constructs_fifo.runtime.state.storage.cancels import SeqRequiredError, StateCanceller
from constructs_fifo.runtime.state.storage.supersede import StateSupersession
from constructs_fifo.runtime.steering.names import (
    MAX_CANCEL_REASON_LENGTH,
)
from constructs_fifo.runtime.steering.pace import PaceLimit
from constructs_fifo.runtime.steering.pace_store import (
    claim_table_key,
    group_table_key,
    read_override,
    write_override,
)
from constructs_fifo.runtime.steering.report import CancelOutcome, CancelReport

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["CancelOutcome", "CancelReport", "GroupCancelReport", "HoldOutcome", "HoldReport", "JobSteering"]

#: A live group's status in a :class:`GroupCancelReport` (it has no header).
LIVE: Final = "LIVE"
#: Lost races a hold or release retries before it says so.
_MAX_ROUNDS: Final = 8


class HoldOutcome(enum.Enum):
    """What :meth:`JobSteering.hold` or :meth:`JobSteering.release` did (or, dry, would do)."""

    #: The group is held now: nothing of it starts until it is released.
    HELD = "HELD"
    #: It was held already: nothing changed.
    ALREADY_HELD = "ALREADY_HELD"
    #: Refused: the group is parked at a dead job (nothing of it runs already); resume it first.
    PARKED = "PARKED"
    #: Released: its kept jobs replay in order, before anything sent later.
    RELEASED = "RELEASED"
    #: Release of a group that is not held: nothing changed (a resuming group's wake-up is sent again).
    NOT_HELD = "NOT_HELD"
    #: :meth:`JobSteering.run_first`: the job is kept at the head of the group, ahead of its kept jobs.
    FIRST = "FIRST"
    #: Refused: the group's queued jobs are being cancelled (a live group's cancel, until its marker).
    CANCELLING = "CANCELLING"


@dataclass(frozen=True)
class HoldReport:
    """What one hold or release found and did."""

    group: str
    outcome: HoldOutcome
    detail: str = ""
    dry_run: bool = False
    wake_up_message_id: str | None = None


_FIXES: Final = {
    "AccessDeniedException": "grant the caller the queue's grant_steer(grantee) (GetItem, PutItem, "
    "UpdateItem on the table)",
    "ResourceNotFoundException": "check the table name: the construct's claim_table / group_table",
}


@dataclass(frozen=True)
class GroupCancelReport:
    """What :meth:`JobSteering.cancel_group` did to each job its group kept (in the kept order).

    Attributes
    ----------
    group:
        The group.
    status:
        Its park header's status at the call: ``HELD``, ``PARKED`` or ``RESUMING``; ``LIVE`` or
        ``CANCELLING`` for a live group (its jobs are cancelled as they arrive, until ``marker_id``).
    jobs:
        One report per kept job with a job id, in order (a dead job's is refused: ``DEAD``); with
        ``running``, the running job's first; for a live group in state mode, the buffered jobs.
    malformed:
        Message ids of kept records without a usable job id (not cancelled: skip them with
        ``groups resume --skip-dead`` when one is the dead job).
    dry_run:
        Nothing was written: each report says what the cancel would do.
    marker_id:
        A live group's cancel: the marker message's id; the runtime cancels the group's records until it.
    """

    group: str
    status: str
    jobs: tuple[CancelReport, ...] = ()
    malformed: tuple[str, ...] = ()
    dry_run: bool = False
    marker_id: str | None = None

    @property
    def cancelled(self) -> int:
        """How many of the jobs stand cancelled."""
        return sum(1 for report in self.jobs if report.outcome.cancelled)


class JobSteering:
    """Steers the jobs of an ``OrderedAgentQueue`` through its tables.

    Parameters
    ----------
    claim_table:
        Claim mode: the construct's ``claim_table`` name. Leave it out in state mode.
    group_table:
        State mode: the construct's ``group_table`` name (required there).
    dynamodb:
        A boto3 DynamoDB client; by default one from boto3's default session.
    claim_ttl_seconds:
        Claim mode: the lifetime of a CANCELLED claim written for a job not yet started (the queue's
        ``claim_ttl``; a copy of the job sent later than that runs).
    sqs, queue_url:
        The source queue: :meth:`release` sends the group's wake-up message there.
    clock:
        Epoch seconds; injectable for tests.

    Raises
    ------
    SteeringQueryError
        Neither table is given.
    """

    def __init__(
        self,
        *,
        claim_table: str | None = None,
        group_table: str | None = None,
        dynamodb: DynamoDBClient | None = None,
        claim_ttl_seconds: int = DEFAULT_CLAIM_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
        sqs: SQSClient | None = None,
        queue_url: str | None = None,
    ) -> None:
        if not claim_table and not group_table:
            raise SteeringQueryError(
                "JobSteering needs the queue's tables: claim_table in claim mode, group_table in state "
                "mode. Fix: pass the construct's claim_table / group_table names (stack outputs, or "
                "`constructs-fifo describe`)."
            )
        if dynamodb is None:
            import boto3  # noqa: PLC0415 - only when no client was injected

            dynamodb = boto3.client("dynamodb")
        self.claim_table = claim_table or None
        self.group_table = group_table or None
        self._claims = (
            ClaimCanceller(claim_table, dynamodb, ttl_seconds=claim_ttl_seconds, clock=clock)
            if claim_table
            else None
        )
        self._states = (
            StateCanceller(group_table, dynamodb, clock=clock) if group_table and not claim_table else None
        )
        self._parking = ParkStore(group_table, dynamodb, clock=clock) if group_table else None
        self._supersession = (
            Supersession(claim_table, dynamodb, ttl_seconds=claim_ttl_seconds, clock=clock)
            if claim_table
            else None
        )
        self._sqs = sqs
        self._queue_url = queue_url
        self._dynamodb = dynamodb
        self._clock = clock

    @property
    def mode(self) -> str:
        """``"claim"`` or ``"state"``."""
        return "claim" if self._claims is not None else "state"

    def cancel(
        self,
        job_id: str,
        *,
        group: str | None = None,
        seq: int | None = None,
        reason: str = "",
        by: str = "",
        dry_run: bool = False,
    ) -> CancelReport:
        """Cancel one job (the module docstring says what each outcome promises).

        Parameters
        ----------
        job_id:
            The job's id.
        group:
            Its group: required in state mode; in claim mode it is stored when the job had no claim
            yet (its outcome then names it).
        seq:
            State mode: the job's ``seq``, when it carries one (required for such a job).
        reason, by:
            Why and who, as the job's outcome will show them (cut to 256 characters each).
        dry_run:
            Read only: say what the cancel would do now, write nothing.

        Raises
        ------
        SteeringQueryError
            An empty ``job_id``, or state mode without ``group``.
        SteeringWriteError
            A table could not be read or written (nothing was half-done: call it again).
        """
        if not isinstance(job_id, str) or not job_id:
            raise SteeringQueryError(f"job_id {job_id!r} is not allowed: pass the job's non-empty id")
        table = self.claim_table or self.group_table or ""
        try:
            if self._claims is not None:
                if dry_run:
                    return self._claims.preview(job_id)
                return self._claims.cancel(job_id, group=group, reason=reason, by=by)
            if not group:
                raise SteeringQueryError(
                    f"job {job_id!r}: state mode cancels a job in its group's state item, so the group is "
                    "required. Fix: pass group= (the MessageGroupId it was sent with; --group on the CLI)."
                )
            states = self._states
            assert states is not None  # built with the group table
            if dry_run:
                return states.preview(job_id, group, seq=seq)
            return states.cancel(job_id, group, seq=seq, reason=reason, by=by)
        except SeqRequiredError as exc:
            raise SteeringQueryError(str(exc)) from exc
        except ClientError as exc:
            raise _write_error(exc, table, f"job {job_id!r}") from exc

    def cancel_group(
        self,
        group: str,
        *,
        reason: str = "",
        by: str = "",
        dry_run: bool = False,
        running: bool = False,
        up_to_seq: int | None = None,
    ) -> GroupCancelReport:
        """Cancel every job of ``group`` sent before this call: none of them runs (claim mode) or is
        applied (state mode); every job sent after the call runs.

        * **A live group** (:mod:`.group_cancel`): its header is set ``CANCELLING`` with a new marker
          id, then the marker message is sent in the group: the runtime cancels each record of the
          group until it meets the marker (FIFO puts it after every job sent before the call and
          before every job sent after), then the group is live again. The jobs are cancelled as they
          arrive, so the report lists none (``marker_id`` names the marker); state mode also cancels
          the jobs waiting in the reorder buffer (listed). Needs ``sqs``/``queue_url``.
        * **A held or parked group**: every job it keeps now is cancelled by :meth:`cancel`'s rules (a
          kept job is not running: claim mode reports ``NOT_STARTED`` or, after failed attempts,
          ``STOPPED``); a parked group's dead job is refused (``DEAD``): skip it with ``groups resume
          --skip-dead``, or retry it.

        Parameters
        ----------
        running:
            Claim mode: also cancel the group's job running now (its claim ``IN_FLIGHT``, found by one
            consistent ``Scan`` of the claim table): a container worker's run is told
            (``context.cancelled``) within one heartbeat interval, a function's result is refused.
            State mode: nothing runs apart from a batch in flight, whose commit the cancel already
            refuses (live group) or the hold refused (held group).
        up_to_seq:
            State mode: cancel only the jobs whose ``seq`` is at or below it (a job without one is
            not cancelled).

        Raises
        ------
        SteeringQueryError
            No group table (claim mode under CONTINUE); ``up_to_seq`` in claim mode; a live group
            without ``sqs``/``queue_url``.
        SteeringWriteError
            A table or the queue could not be written (see the message for what stands; call it
            again: it is safe).
        """
        parking = self._group_parking("cancel_group", group)
        if up_to_seq is not None and self._states is None:
            raise SteeringQueryError(
                f"up_to_seq={up_to_seq!r}: claim mode has no seqs (a job's place is its order in the queue). "
                "Fix: leave up_to_seq out, or cancel single jobs (jobs cancel JOB)."
            )
        try:
            header = parking.header(group)
            running_reports = tuple(self._cancel_running(group, reason, by, dry_run) if running else ())
            if header is None or header.status == CANCELLING:
                return self._cancel_live(
                    parking,
                    group,
                    header,
                    reason=reason,
                    by=by,
                    dry_run=dry_run,
                    up_to_seq=up_to_seq,
                    running=running_reports,
                )
            reports: list[CancelReport] = list(running_reports)
            malformed: list[str] = []
            from_seq = 0
            while True:
                page = parking.kept(group, limit=100, from_seq=from_seq)
                if not page:
                    break
                from_seq = page[-1].seq + 1
                for kept in page:
                    job_id, seq = _job_of(str(kept.record.get("body", "")))
                    if job_id is None:
                        malformed.append(str(kept.record.get("messageId", "")))
                        continue
                    if up_to_seq is not None and (seq is None or seq > up_to_seq):
                        continue
                    reports.append(
                        self.cancel(job_id, group=group, seq=seq, reason=reason, by=by, dry_run=dry_run)
                    )
        except ClientError as exc:
            raise _write_error(exc, parking.table_name, f"group {group!r}") from exc
        return GroupCancelReport(group, header.status, tuple(reports), tuple(malformed), dry_run)

    def _cancel_live(
        self,
        parking: ParkStore,
        group: str,
        header: ParkHeader | None,
        *,
        reason: str,
        by: str,
        dry_run: bool,
        up_to_seq: int | None,
        running: tuple[CancelReport, ...],
    ) -> GroupCancelReport:
        """:meth:`cancel_group` of a live (or already cancelling) group: :mod:`.group_cancel`."""
        if self._sqs is None or not self._queue_url:
            raise SteeringQueryError(
                f"group {group!r} is live: its queued jobs are cancelled by a marker message sent through "
                "the group. Fix: pass sqs= and queue_url= (the construct's queue URL) to JobSteering."
            )
        status = header.status if header is not None else LIVE
        if dry_run:
            return GroupCancelReport(group, status, running, dry_run=True)
        try:
            done = cancel_live_group(
                parking,
                self._dynamodb,
                self._sqs,
                self._queue_url,
                group,
                state_mode=self._states is not None,
                reason=reason,
                by=by,
                up_to_seq=up_to_seq,
            )
        except (ParkConflictError, RuntimeError) as exc:
            raise SteeringWriteError(str(exc)) from exc
        buffered = tuple(
            CancelReport(
                job_id, CancelOutcome.NOT_STARTED, group=group, detail="waiting in the reorder buffer"
            )
            for job_id in done.buffered
        )
        return GroupCancelReport(group, status, (*running, *buffered), marker_id=done.marker_id)

    def _cancel_running(self, group: str, reason: str, by: str, dry_run: bool) -> list[CancelReport]:
        """``running=True`` in claim mode: cancel the group's ``IN_FLIGHT`` jobs (state mode: none)."""
        if self._claims is None:
            return []
        found = self._claims.in_flight(group)
        if dry_run:
            return [self._claims.preview(job_id) for job_id in found]
        return [self._claims.cancel(job_id, group=group, reason=reason, by=by) for job_id in found]

    def send_superseding(
        self, producer: JobProducer, job: JobMessage, *, cancel_running: bool = False
    ) -> SendResult:
        """Send ``job`` (its ``supersede`` key set) so that it supersedes the older jobs of its group and
        key not started (claim mode) or not applied (state mode) yet: its marker is written first, then
        it is sent. Send a key's jobs from one producer: two sending to one (group, key) at once may
        mark and send in different orders.

        * Claim mode (:mod:`constructs_fifo.runtime.claim.supersede`): the marker is an item of the
          claim table. ``cancel_running``: the older jobs of the key that have started (the key's last
          ``MAX_SUPERSEDE_RECENT`` marked) are cancelled too: on a container worker the run is told
          (``context.cancelled``) within one heartbeat interval; on the function it runs to its end;
          either way its result is refused and its outcome reads ``superseded`` (while running).
        * State mode (:mod:`constructs_fifo.runtime.state.storage.supersede`): the marker is kept in
          the group's state item and the mark moves its version, so a transition in flight is never
          committed: an older job not applied when the newer was marked is never applied
          (``cancel_running`` changes nothing: it is always so).

        Raises
        ------
        SteeringQueryError
            ``job`` has no ``supersede`` key.
        SteeringWriteError
            The marker could not be written (nothing was sent).
        """
        if not job.supersede:
            raise SteeringQueryError(
                f"job {job.job_id!r}: send_superseding needs the job's supersede key "
                "(JobMessage(..., supersede='run_tests'))."
            )
        table = self.claim_table or self.group_table or ""
        older: tuple[str, ...] = ()
        try:
            if self._supersession is not None:
                older = self._supersession.mark(job.group, job.supersede, job.job_id)
            else:
                assert self.group_table is not None  # one of the tables is given
                StateSupersession(self.group_table, self._dynamodb, clock=self._clock).mark(
                    job.group, job.supersede, job.job_id
                )
        except ClientError as exc:
            raise _write_error(exc, table, f"job {job.job_id!r}") from exc
        except RuntimeError as exc:
            raise SteeringWriteError(str(exc)) from exc
        sent = producer.send_batch([job])[0]
        if cancel_running and self._supersession is not None and older:
            try:
                self._supersession.stop_running(older, group=job.group, newer=job.job_id)
            except ClientError as exc:
                raise _write_error(exc, table, f"the jobs older than {job.job_id!r}") from exc
        return sent

    # --- hold and release a group -----------------------------------------------------------------

    def hold(self, group: str, *, reason: str = "", by: str = "", dry_run: bool = False) -> HoldReport:
        """Hold ``group``: from its next batch on nothing of it starts; its jobs are kept, in order.

        The rules are :mod:`constructs_fifo.runtime.dead_jobs.parking`'s (rule 5). A batch of the group
        that read its header before the hold finishes (claim mode: its jobs may still start, at most a
        batch's worth; state mode: its commit is refused, nothing of it is applied, because the hold
        also moves the group's state version). Claim mode needs the PARK policy (its one read per
        batch carries the hold); under CONTINUE the queue has no group table.

        Raises
        ------
        SteeringQueryError
            No group table (claim mode under CONTINUE), or an empty ``group``.
        SteeringWriteError
            The table could not be read or written (nothing was half-done: call it again).
        """
        parking = self._group_parking("hold", group)
        try:
            for _ in range(_MAX_ROUNDS):
                header = parking.header(group)
                if header is not None and header.status == HELD:
                    return HoldReport(group, HoldOutcome.ALREADY_HELD, "held already", dry_run)
                if header is not None and header.status == CANCELLING:
                    return HoldReport(
                        group,
                        HoldOutcome.CANCELLING,
                        "refused: the group's queued jobs are being cancelled (groups cancel); hold it once "
                        "its cancel ended (groups show says LIVE)",
                        dry_run,
                    )
                if header is not None and header.status == PARKED:
                    return HoldReport(
                        group,
                        HoldOutcome.PARKED,
                        f"refused: the group is parked at job {header.dead_job_id!r}; nothing of it runs "
                        "until it is resumed (resume it, then hold it, to keep it stopped after it)",
                        dry_run,
                    )
                if dry_run:
                    return HoldReport(group, HoldOutcome.HELD, "would hold the group", True)
                record = DeadJob(
                    job_id="",
                    job_type="",
                    error_type=by[:MAX_CANCEL_REASON_LENGTH] or "operator",
                    error=reason[:MAX_CANCEL_REASON_LENGTH] or "held",
                    attempts=0,
                    message_id="",
                    at_ms=parking.now_ms(),
                    reason=DeadReason.HELD,
                )
                if header is None:
                    _, items = parking.hold_items(group, hold=record)
                else:  # RESUMING: its replay stops at its next page write
                    _, items = parking.advance_items(
                        header, done=(), status=HELD, dead=record, skip_dead=header.skip_dead
                    )
                if self._states is not None:
                    items.append(self._state_fence(group))
                try:
                    parking.transact(items, group)
                except ParkConflictError:
                    continue
                return HoldReport(group, HoldOutcome.HELD, "held: nothing of the group starts until released")
        except ClientError as exc:
            raise _write_error(exc, parking.table_name, f"group {group!r}") from exc
        raise SteeringWriteError(f"group {group!r}: its header changed {_MAX_ROUNDS} times; call hold again")

    def release(self, group: str, *, dry_run: bool = False) -> HoldReport:
        """Release a held ``group``: its kept jobs replay first, in order; then it is live again.

        The header becomes ``RESUMING`` (on condition of its version) and a wake-up message is sent in
        the group, so the replay starts even when nothing else arrives. Releasing a group that is
        resuming already sends its wake-up message again (a release whose send failed can be repeated).

        Raises
        ------
        SteeringQueryError
            No group table, or no ``sqs``/``queue_url`` to send the wake-up message.
        SteeringWriteError
            A table or the queue could not be written (call it again: it is safe).
        """
        parking = self._group_parking("release", group)
        if self._sqs is None or not self._queue_url:
            raise SteeringQueryError(
                "release sends the group's wake-up message to the source queue. Fix: pass sqs= and "
                "queue_url= (the construct's queue URL) to JobSteering."
            )
        try:
            for _ in range(_MAX_ROUNDS):
                header = parking.header(group)
                if header is None or header.status in (PARKED, CANCELLING):
                    detail = (
                        "not held"
                        if header is None
                        else "parked at a dead job: use groups resume"
                        if header.status == PARKED
                        else "its queued jobs are being cancelled: it goes on by itself at the marker"
                    )
                    return HoldReport(group, HoldOutcome.NOT_HELD, detail, dry_run)
                if dry_run:
                    return HoldReport(group, HoldOutcome.RELEASED, "would release the group", True)
                outcome = HoldOutcome.NOT_HELD
                if header.status == HELD:
                    try:
                        parking.advance(
                            header, done=(), status=RESUMING, retry_at_ms=0, skip_dead=header.skip_dead
                        )
                    except ParkConflictError:
                        continue
                    outcome = HoldOutcome.RELEASED
                sent = self._sqs.send_message(**wake_up_message(self._queue_url, group))
                return HoldReport(
                    group,
                    outcome,
                    "released: its kept jobs replay in order"
                    if outcome is HoldOutcome.RELEASED
                    else "resuming already: its wake-up message was sent again",
                    wake_up_message_id=str(sent.get("MessageId", "")),
                )
        except ClientError as exc:
            raise _write_error(exc, parking.table_name, f"group {group!r}") from exc
        raise SteeringWriteError(
            f"group {group!r}: its header changed {_MAX_ROUNDS} times; call release again"
        )

    def run_first(self, job: JobMessage) -> HoldReport:
        """Put ``job`` at the head of its held or parked group: when the group is released (or resumed)
        it runs first, before the jobs the group keeps (an agent's corrected patch ahead of the stale
        jobs behind the failed one).

        The job is kept as a record of its own (``kept#-1``, sorting before every kept record) in one
        transaction with the group's header, on condition of the header's version: a runtime keeping
        or replaying the group meanwhile makes it fail, and it is tried again. A group has at most one
        such job waiting; a live group is refused (send the job normally: it runs after what is queued).

        Raises
        ------
        SteeringQueryError
            No group table; the group is live; a job is already waiting at its head.
        SteeringWriteError
            The table could not be written (call it again).
        """
        parking = self._group_parking("run_first", job.group)
        body = build_body(job)
        try:
            for _ in range(_MAX_ROUNDS):
                header = parking.header(job.group)
                if header is None:
                    raise SteeringQueryError(
                        f"group {job.group!r} is live: nothing is kept to run ahead of. Fix: send the job "
                        "normally, or hold the group first (groups hold GROUP)."
                    )
                if header.status == CANCELLING:
                    raise SteeringQueryError(
                        f"group {job.group!r} is live, its queued jobs being cancelled: nothing is kept to "
                        "run ahead of. Fix: send the job normally (it runs after the cancel)."
                    )
                head = parking.kept(job.group, limit=1)
                if head and head[0].seq < 0:
                    raise SteeringQueryError(
                        f"group {job.group!r} already has job "
                        f"{head[0].record.get('messageId')!r} waiting to run first. Fix: release the group "
                        "and let it run, or cancel it (jobs cancel)."
                    )
                now_ms = parking.now_ms()
                record: dict[str, Any] = {
                    "messageId": f"first-{job.job_id}",
                    "body": body,
                    "attributes": {
                        "ApproximateReceiveCount": "1",
                        "SentTimestamp": str(now_ms),
                        "MessageGroupId": job.group,
                        "MessageDeduplicationId": job.deduplication_id or job.job_id,
                    },
                    "messageAttributes": {
                        name: {"stringValue": value["StringValue"], "dataType": value["DataType"]}
                        for name, value in message_attributes(job).items()
                    },
                }
                kept = KeptRecord(job.group, -1, record)  # type: ignore[arg-type]
                put = {
                    "Put": {
                        "TableName": parking.table_name,
                        "Item": encode_kept(kept, kept_at_ms=now_ms),
                        "ConditionExpression": "attribute_not_exists(#sk)",
                        "ExpressionAttributeNames": {"#sk": GROUP_ATTR_SK},
                    }
                }
                _, items = parking.advance_items(header, done=())
                try:
                    parking.transact([*items, put], job.group)
                except ParkConflictError:
                    continue
                return HoldReport(
                    job.group, HoldOutcome.FIRST, f"job {job.job_id} runs first when the group goes on"
                )
        except ClientError as exc:
            raise _write_error(exc, parking.table_name, f"group {job.group!r}") from exc
        raise SteeringWriteError(f"group {job.group!r}: its header changed {_MAX_ROUNDS} times; call again")

    def set_pace(self, *, jobs: int, per_seconds: int, burst: int | None = None, by: str = "") -> None:
        """Change the queue's pace limit without a deploy: at most ``jobs`` runs per ``per_seconds`` for each
        value of the construct's key, ``burst`` (default ``jobs``) at once. The consumers read it within a
        minute (docs/steering.md, "Pace a key"); the construct's ``pace`` must be set (its key stays).

        Raises
        ------
        SteeringQueryError
            A number out of its range (every problem named).
        SteeringWriteError
            The table could not be written (call it again).
        """
        limit = PaceLimit(jobs=jobs, period_seconds=per_seconds, burst=burst if burst is not None else jobs)
        if problems := limit.problems():
            raise SteeringQueryError(f"set_pace: {'; '.join(problems)}. Fix: pass numbers in those ranges.")
        self._write_pace(limit, by)

    def clear_pace(self, *, by: str = "") -> None:
        """Drop the override: the construct's ``pace`` applies again (within a minute)."""
        self._write_pace(None, by)

    def pace(self) -> dict[str, Any] | None:
        """The override in force (``jobs``, ``period_seconds``, ``burst``, ``updated_at``, ``updated_by``);
        ``None``: the construct's ``pace`` applies."""
        table, item_key = self._pace_table()
        return read_override(self._dynamodb, table, item_key, consistent=True)

    def _write_pace(self, limit: PaceLimit | None, by: str) -> None:
        table, item_key = self._pace_table()
        try:
            write_override(self._dynamodb, table, item_key, limit, by=by, now_ms=int(self._clock() * 1000))
        except ClientError as exc:
            raise _write_error(exc, table, "the pace limit") from exc

    def _pace_table(self) -> tuple[str, Callable[[str], dict[str, Any]]]:
        """The table the runtime reads the pace from: the claim table in claim mode, else the group table."""
        if self.claim_table:
            return self.claim_table, claim_table_key
        assert self.group_table is not None  # one of the two is required
        return self.group_table, group_table_key

    def _group_parking(self, control: str, group: str) -> ParkStore:
        if not isinstance(group, str) or not group:
            raise SteeringQueryError(f"group {group!r} is not allowed: pass the group's MessageGroupId")
        if self._parking is None:
            raise SteeringQueryError(
                f"{control} keeps a group's jobs in the queue's group table, and none was given. Fix: pass "
                "group_table= (claim mode: a queue under the PARK policy, the default; under CONTINUE the "
                "queue has no group table and cannot hold)."
            )
        return self._parking

    def _state_fence(self, group: str) -> dict[str, Any]:
        """State mode: the state item's version moved, so a batch that read the group before the hold
        cannot commit (the item is created when the group has none)."""
        assert self._parking is not None
        return {
            "Update": {
                "TableName": self._parking.table_name,
                "Key": {GROUP_ATTR_GROUP: {"S": group}, GROUP_ATTR_SK: {"S": STATE_SK}},
                "UpdateExpression": "SET #version = if_not_exists(#version, :zero) + :one",
                "ExpressionAttributeNames": {"#version": STATE_ATTR_VERSION},
                "ExpressionAttributeValues": {":zero": {"N": "0"}, ":one": {"N": "1"}},
            }
        }


def _job_of(body: str) -> tuple[str | None, int | None]:
    """A kept body's job id and ``seq`` (``None`` when it has none usable)."""
    try:
        decoded = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(decoded, dict):
        return None, None
    job_id, seq = decoded.get("jobId"), decoded.get("seq")
    return (
        job_id if isinstance(job_id, str) and job_id else None,
        seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
    )


def _write_error(exc: ClientError, table: str, what: str) -> SteeringWriteError:
    error: dict[str, Any] = dict(exc.response.get("Error", {}))
    code = str(error.get("Code", "Unknown"))
    fix = _FIXES.get(code, "retry (a control is one conditional write: repeating it is safe)")
    return SteeringWriteError(
        f"steering {what} in table {table!r} failed: {code}: {error.get('Message', '')}; {fix}"
    )
