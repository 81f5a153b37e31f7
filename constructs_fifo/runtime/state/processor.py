"""The state-mode batch processor: each group's jobs applied to its state once, in order, one write.

In state mode the job function is a transition ``apply(job, state) -> next_state`` of its group's
state (:mod:`constructs_fifo.runtime.state.core.apply` states the core's rules). This is state mode's
variant of the batch skeleton (:mod:`constructs_fifo.runtime.batch_processor`: the batch's opening,
its deadline, its error path and its report are the skeleton's). Rules, per batch:

1. **One read.** The state items (``sk = "state"``) and park headers (``sk = "park"``) of every group
   of the batch come in one consistent ``BatchGetItem``
   (:meth:`~constructs_fifo.runtime.state.storage.store.StateStore.load_with_park_headers`).
2. **Deadline.** A group starts only with at least ``safety_margin_ms`` of invocation time left (and
   while the skeleton's heartbeat does not say the batch went stale); the records of the groups not
   started are reported (``DEADLINE``, visibility 0). A group is applied and committed whole or not
   at all.
3. **A live group** (no park header): its records run through the core
   (:func:`~constructs_fifo.runtime.state.core.apply.run_group`: malformed records are split out, dead at
   once), then **one conditional write**: a ``PutItem`` of the state, or, when the group parks in this
   batch, one ``TransactWriteItems`` of the state, the park header and the kept records. Nothing is
   written when nothing changed.

   - ``APPLIED``, ``DUPLICATE``, ``BUFFERED``: the record is deleted (not reported).
   - ``RETRY``: reported with the backoff of the attempt its reason names (``FAILED``: its own;
     ``BLOCKED`` and ``CARRIER``: the job that stopped the group; ``BUFFER_FULL``: the record's
     receive count).
   - ``DEAD`` (go-on policy) and ``DEAD_COPY``: sent to the dead-letter queue with its triage
     attributes **after** the commit, then deleted. If the send fails the record is reported: its id
     and entry are in the committed bookkeeping, so its redelivery is ``DEAD_COPY`` carrying that
     entry and is sent again as it died (its reason, error and attempts; a copy in another message
     says ``COPY_OF_DEAD_JOB``). A buffered job that dies (no record in the batch) is committed
     dead and *owed*, then sent (:class:`~constructs_fifo.runtime.state.outcomes.OwedLetters`): if
     that send fails, a record of the group is reported, and its next run sends what is owed before
     anything else.
   - ``KEEP`` (park policy): kept in the group table in the same transaction as the state. The
     group's park header records the dead job; when that job died waiting in the reorder buffer it
     has no kept record, and a resume that skips it lets the runtime send it (rule 4).
   - **A lost race** (another worker committed the group first) commits and sends nothing: every
     record of the group is reported (``FENCED``) with the first backoff, and comes back to find the
     winner's state. A failed write (throttling, ...) is handled the same way (``ERROR``); if it did
     commit, the records come back as duplicates and dead copies.
   - **A stalled group**: a buffered job that failed waits at the head of the buffer, and only a
     record of the group coming back retries it. The core keeps one committed record for that
     (``CARRIER``); when every record of the group was dead there is none, so the group gets a
     wake-up message (the same control message as a resume's). A live group's wake-up message is
     reported with the failed job's backoff on its first receive (SQS FIFO has no per-message
     delay), then ticks the group (the core with no jobs: the buffer drains); a wake-up of a group
     that is not stalled is deleted.
4. **A parked group** (a header): ``PARKED``, its records are kept behind the dead job (one
   transaction), as in claim mode. ``RESUMING``: its records are kept, then its kept records are
   replayed, in order, through the core (:mod:`constructs_fifo.runtime.state.replay`). Wake-up
   messages follow claim mode's rule (:func:`~constructs_fifo.runtime.batch_report.settle_wake_ups`).

5. **A crash counts as an attempt** (:mod:`constructs_fifo.runtime.state.crash_watch`). A live group
   whose records were received before writes a run marker (its run item) before its first transition;
   a marker found at the read means that run did not commit, and the group's next run marks each
   transition, so the next crash names its job: that job's attempt is counted, and at ``max_attempts``
   it is dead (``WorkerCrashedError``) without running. A marker write that loses its race commits
   nothing (``FENCED``, as a lost commit); one that fails is ``ERROR``.

6. **Paced** (a ``pace`` limit only; :mod:`constructs_fifo.runtime.state.pacing`): before a live group
   runs, its records take their keys' tokens, up to a run of one key's records in one ``UpdateItem``;
   the records from the first without a token on are reported (``PACED``, then ``SKIPPED``) with the
   wait until the token is due, no attempt counted; the ones before it run as above.

Every record gets one outcome line; a buffered job gets its ``SUCCEEDED`` line when it is applied.
Per group and batch, a metric line gives the open sequence gap (``SequenceGapOpenSeconds``) and the
ranges ``SKIP_GAP`` gave up (``SequenceGapsSkipped``, ``SequenceJobsSkipped``).

Call budget: one ``BatchGetItem`` per batch and one write per group that changed: a batch of ten jobs
of one group costs 2 DynamoDB calls on its first delivery. A redelivered group adds its marker write (1 unit);
while a crash is isolated, one write per transition; a group whose buffered job died, one write
more (clearing the dead letter owed once sent). A resuming group adds one transaction to keep
its records and a ``Query`` and a transaction per page of kept records replayed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from constructs_fifo.runtime.batch_processor import NO_HEARTBEAT, BaseBatchProcessor, Heartbeat, OpenedBatch
from constructs_fifo.runtime.batch_report import BatchReport
from constructs_fifo.runtime.clock import DEFAULT_SAFETY_MARGIN_MS
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.parking import (
    RESUMING,
    ParkHeader,
    is_wake_up,
    wake_up_message,
)
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.exceptions import ConstructsFifoRuntimeError
from constructs_fifo.runtime.job import record_attempt, record_group, record_message_id
from constructs_fifo.runtime.state.commit import GroupCommit
from constructs_fifo.runtime.state.core.engine import stalled_on
from constructs_fifo.runtime.state.core.records import BatchSettings, GroupState, Outcome
from constructs_fifo.runtime.state.crash_watch import RunInterrupted
from constructs_fifo.runtime.state.group_cancel import cancel_before_marker, send_back_after_marker
from constructs_fifo.runtime.state.outcomes import OwedLetters, StateOutcomes
from constructs_fifo.runtime.state.pacing import paced_prefix
from constructs_fifo.runtime.state.replay import StateReplay
from constructs_fifo.runtime.steering.group_cancel import is_cancelling, split_at_marker
from constructs_fifo.runtime.steering.pace_store import group_table_key, open_pace

if TYPE_CHECKING:  # pragma: no cover - typing only
    from collections.abc import Mapping

    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.backoff import VisibilityApplier
    from constructs_fifo.runtime.batch_processor import LatestHeaders
    from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
    from constructs_fifo.runtime.dead_jobs.parking import ParkStore
    from constructs_fifo.runtime.observability import JobLogger
    from constructs_fifo.runtime.settings.config import RuntimeConfig
    from constructs_fifo.runtime.state.core.engine import Transition
    from constructs_fifo.runtime.state.core.records import BatchResult
    from constructs_fifo.runtime.state.storage.runs import FoundRun
    from constructs_fifo.runtime.state.storage.store import StateStore
    from constructs_fifo.runtime.steering.pace_store import PaceStore
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["StateBatchProcessor"]


class _GroupsRead(NamedTuple):
    """What a batch's one read gives state mode, besides the park headers."""

    states: Mapping[str, GroupState]
    runs: Mapping[str, FoundRun]


class StateBatchProcessor(BaseBatchProcessor[BatchReport, _GroupsRead]):
    """Processes Lambda SQS FIFO batches in state mode; see the module docstring for the rules.

    The batch's skeleton (opening, deadline, errors, report) is
    :class:`~constructs_fifo.runtime.batch_processor.BaseBatchProcessor`'s; this variant reads the
    groups' states with their headers and runs, commits and settles one group at a time.

    Parameters
    ----------
    settings : RuntimeConfig
        The runtime's settings: ``on_dead_job`` (PARK, the construct's default, or CONTINUE),
        ``max_attempts``, ``reorder_limit``, ``gap_policy``, ``gap_timeout_seconds`` (see
        :func:`~constructs_fifo.runtime.state.core.apply.apply_batch`), ``queue_url``,
        ``backoff_base_seconds`` and ``visibility_timeout_seconds``.
    transition : Transition
        The user's ``apply(job, state) -> next_state`` (pure; ``state`` is ``None`` at first).
    states : StateStore
        The group table's state items.
    parking : ParkStore
        The same group table's park headers and kept records.
    visibility, logger, heartbeat, safety_margin_ms
        As :class:`~constructs_fifo.runtime.batch_processor.BaseBatchProcessor`'s.
    dead_letters : DeadLetterSender
        Sends dead jobs to the dead-letter queue.
    sqs : SQSClient
        Sends wake-up messages (to ``settings.queue_url``): a resuming group's fresh one, a stalled group's.
    pace_store : PaceStore or None
        The queue's pace limit on the group table (rule 6); ``None``: the one ``settings.pace`` names,
        if any (none: not paced, nothing read or written).

    Raises
    ------
    ValueError
        ``states`` and ``parking`` are not on the same table, or a setting is out of its range.

    Examples
    --------
    >>> states = StateStore("groups", dynamodb)  # doctest: +SKIP
    >>> processor = StateBatchProcessor(  # doctest: +SKIP
    ...     settings=RuntimeConfig(claim_table="", queue_url=queue_url, mode=JobMode.STATE),
    ...     transition=apply, states=states, parking=ParkStore("groups", dynamodb), logger=logger,
    ...     visibility=VisibilityChanger(sqs, queue_url, on_error=logger.event),
    ...     dead_letters=DeadLetterSender(sqs, dlq_url), sqs=sqs)
    >>> processor.process(event, context)  # doctest: +SKIP
    {'batchItemFailures': []}
    """

    read_failed_note = "the groups' states could not be read"

    def __init__(
        self,
        *,
        settings: RuntimeConfig,
        transition: Transition,
        states: StateStore,
        parking: ParkStore,
        visibility: VisibilityApplier,
        logger: JobLogger,
        dead_letters: DeadLetterSender,
        sqs: SQSClient,
        heartbeat: Heartbeat = NO_HEARTBEAT,
        safety_margin_ms: int = DEFAULT_SAFETY_MARGIN_MS,
        pace_store: PaceStore | None = None,
    ) -> None:
        if states.table_name != parking.table_name:
            raise ValueError(
                f"states is on table {states.table_name!r} and parking on {parking.table_name!r}; state "
                "mode keeps both in the group table: build both stores on it"
            )
        super().__init__(
            settings, logger, visibility, sqs, heartbeat=heartbeat, safety_margin_ms=safety_margin_ms
        )
        self._settings = BatchSettings(
            max_attempts=settings.max_attempts,
            park_on_dead=settings.on_dead_job is DeadJobPolicy.PARK,
            reorder_limit=settings.reorder_limit,
            gap_policy=settings.gap_policy,
            gap_timeout_ms=settings.gap_timeout_seconds * 1000,
            size_of=states.item_size,
        )
        self._states = states
        self._parking = parking
        self._pace = pace_store or open_pace(settings.pace, states.table_name, states.client, group_table_key)
        self._settings_cap = settings.visibility_timeout_seconds
        self._wake_up_sqs = sqs
        self._outcomes = StateOutcomes(
            out=self._out,
            states=states,
            parking=parking,
            dead_letters=dead_letters,
            max_attempts=settings.max_attempts,
            backoff_base_seconds=settings.backoff_base_seconds,
            cap_seconds=settings.visibility_timeout_seconds,
            queue_name=self._queue_name,
        )
        self._owed = OwedLetters(self._outcomes, states)
        self._commit = GroupCommit(
            transition=transition,
            settings=self._settings,
            states=states,
            outcomes=self._outcomes,
            owed=self._owed,
            keep_marker=True,
            admit=heartbeat.admit,
        )
        self._replay = StateReplay(
            transition=transition,
            settings=self._settings,
            parking=parking,
            outcomes=self._outcomes,
            markers=states,
            clock_ms=states.now_ms,
            admit=heartbeat.admit,
            out_of_time=self._out_of_time,
            pace=self._pace,
            pace_cap_seconds=self._settings_cap,
        )

    # --- the skeleton's steps -------------------------------------------------------------------------

    def _new_report(self) -> BatchReport:
        return BatchReport()

    def _read(self, records: list[SQSRecord]) -> tuple[Mapping[str, ParkHeader], _GroupsRead]:
        """Rule 1: the states, park headers and (for redelivered groups) run items, in one read."""
        groups = list(dict.fromkeys(record_group(record) for record in records))
        redelivered = {record_group(record) for record in records if record_attempt(record) > 1}
        states, headers, runs = self._states.load_for_batch(groups, runs_of=redelivered)
        return headers, _GroupsRead(states, runs)

    def _run(self, opened: OpenedBatch[_GroupsRead], context: Any, report: BatchReport) -> LatestHeaders:
        """Rules 2 to 5: each group in batch order, while there is time to start it."""
        records, headers, read = opened.records, opened.headers, opened.read
        by_group: dict[str, list[SQSRecord]] = {}
        for record in records:
            if not is_wake_up(record):
                by_group.setdefault(record_group(record), []).append(record)
        latest: dict[str, ParkHeader | None] = dict(headers)
        out_of_time = False
        for group in dict.fromkeys(record_group(record) for record in records):
            group_records, found = by_group.get(group, []), read.runs[group]
            out_of_time = out_of_time or self._out_of_time(context)
            if out_of_time:  # a live group's wake-up too (its only way back), and a cancel's marker
                keeps = group not in headers or is_cancelling(headers.get(group))
                wake_ups = report.wake_ups.get(group, []) if keeps else []
                self._not_reached([*group_records, *wake_ups], report)
            elif is_cancelling(headers.get(group)):
                of_group = [record for record in records if record_group(record) == group]
                latest[group] = self._cancelling_group(headers[group], of_group, read, found, report)
            elif group in headers:
                latest[group] = self._parked_group(
                    headers[group], group_records, read.states[group], context, report, found=found
                )
            else:
                latest[group] = self._live_group(group, group_records, read.states[group], found, report)
        return latest

    def _now_ms(self) -> int:
        return self._states.now_ms()

    # --- rule 3: a live group ------------------------------------------------------------------------

    def _live_group(
        self,
        group: str,
        records: list[SQSRecord],
        read: GroupState,
        found: FoundRun,
        report: BatchReport,
    ) -> ParkHeader | None:
        """Run, commit and settle one live group's records; return its new header if it parked.

        Without records (only a wake-up message of the group in the batch) the group ticks: see
        :meth:`_tick_due`. A redelivered group's run is watched for crashes (rule 5).
        """
        wake_ups = report.wake_ups.get(group, [])
        if self._pace is not None and records:
            records = self._paced(group, records, report)
            if not records:
                return None
        owes = bool(read.book.owed and wake_ups)  # a wake-up reported for what is owed: run to pay it
        if not records and not owes and not self._tick_due(read, wake_ups, report):
            return None
        answerable = records or wake_ups[:1]  # what is reported when nothing could be committed
        redelivered = any(record_attempt(record) > 1 for record in [*records, *wake_ups])
        if found.marker is not None and found.marker.job_id is not None:
            self._outcomes.out.logger.event(found.marker.counted_event(group))
        like = records[0] if records else None
        try:
            done = self._commit.run(
                read,
                records,
                found=found,
                redelivered=redelivered,
                now_ms=self._states.now_ms(),
                items_of=lambda run: self._park_items(group, records, run),
                like=like,
            )
        except RunInterrupted as stop:  # a marker could not be written: nothing of the run is committed
            if stop.cause is None:
                self._lost_race(group, answerable, report)
                return None
            for record in answerable:
                self._error(record, stop.cause, report, note=f"group {group!r} could not be committed")
            return None
        except Exception as exc:  # nothing (known to be) committed: every record comes back, in order
            for record in answerable:
                self._error(record, exc, report, note=f"group {group!r} could not be committed")
            return None
        if not done.committed:
            self._lost_race(group, answerable, report)
            return None
        run = done.run
        for send in done.paid:
            self._owed.line(send, paid=True)
        sends, _ = self._owed.send_new(done.final, done.version + 1, like, run=done.carried)
        for send in sends:
            self._owed.line(send)
        self._outcomes.settle(group, records, run, done.recorder, report)
        if any(send.failed for send in sends):  # still owed: a record comes back (else a wake-up)
            self._owed.come_back(answerable[0], report)
        if run.stalled_on is not None and not any(r.outcome is Outcome.RETRY for r in run.results):
            self._bring_back(group, run.stalled_on, wake_ups, report)
        return done.header

    def _paced(self, group: str, records: list[SQSRecord], report: BatchReport) -> list[SQSRecord]:
        """Rule 6: the records holding a pace token now (the rest reported, or all when it failed)."""
        assert self._pace is not None
        try:
            return paced_prefix(self._pace, records, report, self._outcomes.out, self._settings_cap)
        except Exception as exc:  # the bucket could not be written: nothing ran, all come back
            for record in records:
                self._error(record, exc, report, note=f"group {group!r}'s pace could not be taken")
            return []

    def _lost_race(self, group: str, answerable: list[SQSRecord], report: BatchReport) -> None:
        """Another worker committed the group first: nothing of this run stands; its records come back."""
        delay = self._outcomes.backoff(1)
        for record in answerable:
            self._outcomes.lost_race(record, delay)
            report.report(record, delay)
        report.blocked[group] = delay

    def _tick_due(self, read: GroupState, wake_ups: list[SQSRecord], report: BatchReport) -> bool:
        """Whether a live group's wake-up message runs a tick now.

        Only a group stalled on a failed buffered job is woken (any other wake-up of a live group is
        deleted). SQS FIFO has no per-message delay, so a wake-up waits out the job's backoff on its
        first receive (reported with it), and ticks on the next.
        """
        stalled = stalled_on(read, self._settings.first_seq)
        if stalled is None or not wake_ups:
            return False
        if any(record_attempt(wake_up) > 1 for wake_up in wake_ups):
            return True
        report.report(wake_ups[0], self._outcomes.backoff(stalled[1]))
        return False

    def _bring_back(
        self, group: str, stalled: tuple[str, int], wake_ups: list[SQSRecord], report: BatchReport
    ) -> None:
        """Rule 3: a group stalled with no record of it reported gets a wake-up message to come back.

        The batch's own wake-up message is reported with the backoff when it has one; else a new one
        is sent (if that send fails, the group waits for its next record: nothing is lost).
        """
        job_id, attempt = stalled
        if wake_ups:
            report.report(wake_ups[0], self._outcomes.backoff(attempt))
            return
        try:
            self._wake_up_sqs.send_message(**wake_up_message(self._queue_url, group))
        except Exception as exc:
            self._outcomes.out.logger.event(
                {
                    "event": "wake_up_failed",
                    "group": group,
                    "jobId": job_id,
                    "error": describe(exc),
                }
            )

    def _park_items(
        self, group: str, records: list[SQSRecord], run: BatchResult
    ) -> tuple[ParkHeader | None, list[dict[str, Any]]]:
        """The header and kept records of a group that parks in this batch (else nothing to write).

        The kept records start at the dead job, except when it died waiting in the reorder buffer:
        it has no record then, and the header alone records it.
        """
        kept = [r for r, result in zip(records, run.results, strict=True) if result.outcome is Outcome.KEEP]
        if not kept and run.parked_by is None:
            return None, []
        parker = run.parked_by or run.group_state.book.parked  # or parked before, with no header
        if parker is None:  # never: KEEP comes only from a parked group; lose nothing all the same
            raise ConstructsFifoRuntimeError(f"group {group!r} keeps records but is not parked")
        return self._parking.park_items(group, kept, dead=parker)

    # --- a cancelling group (docs/steering.md) -------------------------------------------------------

    def _cancelling_group(
        self,
        header: ParkHeader,
        records: list[SQSRecord],
        read: _GroupsRead,
        found: FoundRun,
        report: BatchReport,
    ) -> ParkHeader | None:
        """:mod:`~constructs_fifo.runtime.steering.group_cancel`'s rules in state mode: the records before
        the marker are committed as cancelled (their places closed by the core, with the state), then
        the header is deleted; return the group's header."""
        group = header.group
        split = split_at_marker(header, records)
        state, jobs = cancel_before_marker(header, split, read.states[group], self._out)
        if split.marker is not None:  # the marker is this rule's, not a tick of the group
            report.wake_ups[group] = [w for w in report.wake_ups.get(group, []) if w is not split.marker]
        if jobs or report.wake_ups.get(group):
            self._live_group(group, jobs, state, found, report)
        come_back = [*([split.marker] if split.marker is not None else []), *split.after]
        delay = report.blocked.get(group)
        if delay is not None or any(
            record_message_id(record) in report.failures for record in jobs
        ):  # not (all) committed
            for record in come_back:
                report.report(record, delay or 0)
            return header
        if not split.ended:
            return header
        try:
            self._parking.finish(header)
        except Exception as exc:  # met again: the marker and what follows come back
            for record in come_back:
                self._error(record, exc, report, note="the group cancel's header could not be deleted")
            return header
        self._out.logger.event({"level": "INFO", "event": "group_cancel_done", "group": group})
        send_back_after_marker(self._out, split.after, report)
        return None

    # --- rule 4: parked groups -----------------------------------------------------------------------

    def _parked_group(
        self,
        header: ParkHeader,
        records: list[SQSRecord],
        read: GroupState,
        context: Any,
        report: BatchReport,
        *,
        found: FoundRun,
    ) -> ParkHeader | None:
        """Keep a parked group's records; replay a resuming one; return its header after."""
        group = header.group
        if records:
            repeated = {id(r) for r in records} - {id(r) for r in header.new_records(records)}
            try:
                header = self._parking.keep(header, records)
            except Exception as exc:
                self._not_kept(group, records, exc, report)
                return header
            self._kept_lines(group, records, repeated, verb="applied")
        if header.status == RESUMING and header.retry_at_ms <= self._states.now_ms():
            return self._replay.replay(header, read, context, report, found)
        return header
