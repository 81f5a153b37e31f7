"""A resuming group's replay: its kept records read back page by page, each page one group commit.

An operator resumes a parked group with :meth:`constructs_fifo.client.ParkedGroups.resume`: the
header becomes ``RESUMING`` with the operator's choice (``skip_dead``) and a wake-up message is sent
in the group. Whenever the processor sees a ``RESUMING`` group whose ``retry_at_ms`` has passed, it
keeps the batch's records of the group, then replays page after page (``KEPT_PAGE_SIZE`` records, one
``Query`` each):

1. **Unpark the state first.** When the state is parked at a dead job (``book.parked``), the first
   page starts with :func:`~constructs_fifo.runtime.state.core.apply.resume_group`, skipping or retrying
   the dead job as the header says. The operator's skip already sent a kept dead job to the
   dead-letter queue; a dead job that died waiting in the reorder buffer has no kept record, so the
   replay sends it from the buffer, before the commit (it is dead in the committed state already). A
   group parked at a malformed record has no death in its state: retrying replays the record (which
   parks the group again), skipping dropped it.
2. **Each page is one group commit** (:class:`~constructs_fifo.runtime.state.commit.GroupCommit`) and one
   transaction: the state (when it changed), the deletes of the kept records that are finished
   (``APPLIED``, ``DUPLICATE``, ``BUFFERED``, or dead and sent), and the header: deleted when the last
   page is done (the group is live again), ``retry_at_ms`` set to the backoff when a kept record is
   ``RETRY`` (it stays kept; the wake-up message comes back then) or a buffered job failed,
   ``PARKED`` again with the new dead job when one dies under the PARK policy. A kept record cannot
   be reported like a queue record: one that dies in a page (CONTINUE) stays kept, its death
   committed, and the next page (at once) finds it ``DEAD_COPY`` of the message it died in and sends
   it as it died (a malformed record, whose death the state never records, is sent in its own page),
   **before** that page's commit (it is dead in the committed state: sending first
   cannot lose it nor dead-letter a job that may still apply); if that commit then fails, the record
   stays kept and is sent again (the dead-letter queue's deduplication id is derived from its
   message id). Sending a job before the commit of its death would let a crash leave it
   dead-lettered yet not dead, and a later page apply it. A buffered job that dies in a page is
   committed dead and owed, then sent (:class:`~constructs_fifo.runtime.state.outcomes.OwedLetters`);
   a page sends what is owed before anything else, and a group left live still owing one has its
   wake-up message reported, to come back.
3. **A lost race** (another worker, or an operator, wrote the group first) writes nothing: the
   wake-up message comes back after the first backoff and the replay starts again from what stands.
4. **A crash counts** (:mod:`constructs_fifo.runtime.state.crash_watch`). Every page is watched: a run
   marker is written before its first transition (replays are rare: the write is cheap insurance),
   and a marker found at the read isolates the first page, whose transitions are then marked one by
   one; the job that stops the worker again is counted, and dead at ``max_attempts`` (the group parks
   at it again). The page's transaction then always writes the state, which passes the marker.
5. **Paced** (a ``pace`` limit only): a page's kept records take their tokens before the page runs
   (:func:`~constructs_fifo.runtime.state.pacing.take_tokens`; they were kept without one, a held or
   parked group's records are not paced as they arrive), and the page is cut at the first record
   without one; with none, nothing is written and the wake-up message comes back when the token is
   due. So a released or resumed group never runs its key faster than the limit.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.batch_processor import NO_HEARTBEAT
from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.dead_jobs.parking import KEPT_PAGE_SIZE, PARKED
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.state.commit import GroupCommit
from constructs_fifo.runtime.state.core.apply import RecordingTransition, resume_group
from constructs_fifo.runtime.state.core.records import Outcome
from constructs_fifo.runtime.state.crash_watch import RunInterrupted
from constructs_fifo.runtime.state.outcomes import OwedLetters, OwedSend, buffered_record, owing
from constructs_fifo.runtime.state.pacing import take_tokens
from constructs_fifo.runtime.state.storage.runs import FoundRun
from constructs_fifo.runtime.steering.pace import wait_seconds

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.batch_report import BatchReport
    from constructs_fifo.runtime.dead_jobs.letters import DeadLetter
    from constructs_fifo.runtime.dead_jobs.parking import KeptRecord, ParkHeader, ParkStore
    from constructs_fifo.runtime.state.core.engine import Transition
    from constructs_fifo.runtime.state.core.records import BatchResult, BatchSettings, GroupState, JobResult
    from constructs_fifo.runtime.state.outcomes import StateOutcomes
    from constructs_fifo.runtime.state.storage.store import StateStore
    from constructs_fifo.runtime.steering.pace_store import PaceStore
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["StateReplay"]

_KEPT_ACTION = "stays kept; the group's replay resumes after the delay"
_DONE = (Outcome.APPLIED, Outcome.DUPLICATE, Outcome.BUFFERED)

#: A dead job's record, its dead-letter message and what sending it gave (the DLQ id or the error).
_Sent = tuple["SQSRecord", "DeadLetter", "str | Exception"]


def _malformed(result: JobResult) -> bool:
    """A malformed kept record's death (``CONTINUE``, a held group's): the state never records it, so
    no later page finds it ``DEAD_COPY``; it is sent in its own page, before the commit, which is safe
    for a record that can never apply (parsing is deterministic). Before this, a released group under
    ``CONTINUE`` that kept a malformed record replayed the same page forever (found by the chaos
    suite's state-mode newest-wins property: a hold, a malformed record, a release)."""
    return result.dead is not None and result.dead.reason is DeadReason.MALFORMED


class StateReplay:
    """Replays resuming groups; see the module docstring for the rules.

    Parameters
    ----------
    transition : Transition
        The user's transition.
    settings : BatchSettings
        The queue's state-mode settings.
    parking : ParkStore
        The group table's park headers and kept records.
    outcomes : StateOutcomes
        The write, the dead-letter messages and the outcome lines.
    markers : StateStore
        Writes a page's run markers, and its commit.
    clock_ms : Callable[[], int]
        The time of a page (epoch ms).
    out_of_time : Callable[[Any], bool]
        Whether no further page may start (given the context): the batch skeleton's deadline.
    pace : PaceStore or None
        The queue's pace limit (rule 5; ``None``: not paced); ``pace_cap_seconds`` caps a paced wait
        (the visibility timeout).
    """

    def __init__(
        self,
        *,
        transition: Transition,
        settings: BatchSettings,
        parking: ParkStore,
        outcomes: StateOutcomes,
        markers: StateStore,
        clock_ms: Callable[[], int],
        out_of_time: Callable[[Any], bool],
        admit: Callable[..., AbstractContextManager[object]] = NO_HEARTBEAT.admit,
        pace: PaceStore | None = None,
        pace_cap_seconds: int = 0,
    ) -> None:
        self._pace = pace
        self._pace_cap_seconds = pace_cap_seconds
        self._markers = markers
        self._transition = transition
        self._settings = settings
        self._parking = parking
        self._outcomes = outcomes
        self._clock_ms = clock_ms
        self._out_of_time = out_of_time
        self._owed = OwedLetters(outcomes, markers)
        # a page keeps no marker: see constructs_fifo.runtime.state.commit for why
        self._commit = GroupCommit(
            transition=transition,
            settings=settings,
            states=markers,
            outcomes=outcomes,
            owed=self._owed,
            keep_marker=False,
            admit=admit,
        )
        self._died: frozenset[str] = frozenset()  # kept jobs that died in the page before (rule 2)

    def replay(
        self,
        header: ParkHeader,
        read: GroupState,
        context: Any,
        report: BatchReport,
        found: FoundRun | None = None,
    ) -> ParkHeader | None:
        """Replay a resuming group's kept records; return its header after (``None``: live again).

        ``found`` is what the read found of the group's run (rule 4).
        """
        group, state = header.group, read
        log = self._outcomes.out.logger.event
        self._died = frozenset()
        try:
            while not self._out_of_time(context):
                page, wait = self._paced(group, self._parking.kept(group))
                if wait is not None and not page:  # rule 5: no token now, the wake-up comes back then
                    report.blocked[group] = max(report.blocked.get(group, 0), wait)
                    return header
                step = self._page(header, state, page, found or FoundRun(), cut=wait is not None)
                found = FoundRun()  # the page's commit passed any marker: the next page writes over it
                if step is None:
                    log({"event": "replay_conflict", "group": group, "error": "the group changed meanwhile"})
                    report.blocked.setdefault(group, self._outcomes.backoff(1))
                    return header
                updated, state, more = step
                if updated is None:
                    log({"level": "INFO", "event": "group_resumed", "group": group})
                    if state.book.owed:  # a dead letter still owed: the wake-up brings the group back
                        for wake_up in report.wake_ups.get(group, [])[:1]:
                            report.report(wake_up, self._outcomes.backoff(1))
                    return None
                header = updated
                if not more:
                    return header
        except Exception as exc:  # progress so far is committed; what is left is replayed again
            log({"event": "replay_failed", "group": group, "error": describe(exc)})
            report.blocked.setdefault(group, self._outcomes.backoff(1))
        return header

    def _paced(self, group: str, page: list[KeptRecord]) -> tuple[list[KeptRecord], int | None]:
        """Rule 5: the page's prefix holding tokens, and the wait for the next (``None``: all hold)."""
        if self._pace is None or not page:
            return page, None
        holding, due_ms = take_tokens(self._pace, [kept.record for kept in page])
        if holding == len(page):
            return page, None
        wait = wait_seconds(due_ms, self._pace.now_ms(), self._pace_cap_seconds)
        self._outcomes.out.logger.event(
            {
                "level": "INFO",
                "event": "replay_paced",
                "group": group,
                "kept": len(page) - holding,
                "wait": wait,
            }
        )
        return page[:holding], wait

    def _page(
        self, header: ParkHeader, state: GroupState, page: list[KeptRecord], found: FoundRun, *, cut: bool
    ) -> tuple[ParkHeader | None, GroupState, bool] | None:
        """One page, one transaction; ``None`` when the race was lost, else (header, state, more).
        ``cut``: the page was cut short by its pace (rule 5): kept records are left behind it."""
        group, now = header.group, self._clock_ms()
        resumed, skipped = self._resume(header, state)
        sent_kept: dict[int, _Sent] = {}
        died: set[str] = set()
        delay: list[int | None] = [None]

        def items_of(run: BatchResult) -> tuple[ParkHeader | None, list[dict[str, Any]]]:
            for _, _, sent in skipped:  # dead in the committed state already: sent before the commit
                if isinstance(sent, Exception):
                    raise sent
            done, delay[0] = self._settle_page(group, page, run, sent_kept, died)
            full = len(page) >= KEPT_PAGE_SIZE or bool(died) or cut
            return self._header_after(header, run, done, delay[0], full=full, now=now)

        like = page[0].record if page else None
        try:
            done = self._commit.run(
                state,
                [kept.record for kept in page],
                start=resumed,
                found=found,
                redelivered=True,
                now_ms=now,
                items_of=items_of,
                like=like,
            )
        except RunInterrupted as stop:  # a marker could not be written: nothing of the page is committed
            if stop.cause is not None:
                raise stop.cause from stop
            return None
        if not done.committed:
            return None
        for send in done.paid:
            self._owed.line(send, paid=True, replayed=True)
        owed, cleared = self._owed.send_new(done.final, done.version + 1, like)
        self._lines(group, page, run=done.run, recorder=done.recorder, sends=(skipped, owed, sent_kept))
        self._died = frozenset(died)
        after = replace(done.final, version=done.version + 1) if done.changed else state
        if cleared:
            after = replace(owing(after, ()), version=after.version + 1)
        more = done.header is not None and done.run.parked_by is None and delay[0] is None
        return done.header, after, more

    def _settle_page(
        self,
        group: str,
        page: list[KeptRecord],
        run: BatchResult,
        sent_kept: dict[int, _Sent],
        died: set[str],
    ) -> tuple[list[KeptRecord], int | None]:
        """Rule 2, before the commit: the kept records finished, the dead copies sent, the delay."""
        outcomes = self._outcomes
        done: list[KeptRecord] = []
        delay: int | None = None
        for index, (kept, result) in enumerate(zip(page, run.results, strict=True)):
            if result.outcome in _DONE:
                done.append(kept)
            elif result.outcome is Outcome.DEAD and not _malformed(result):
                died.add(result.job_id)  # stays kept until its death is committed: sent next page
            elif result.outcome is Outcome.DEAD_COPY or result.outcome is Outcome.DEAD:
                copy = result.dead is None  # a DEAD_COPY of the message the job died in carries its entry
                sent_kept[index] = self._send(
                    kept.record, outcomes.entry_of(result, run.jobs[index]), group, copy=copy
                )
                if isinstance(sent_kept[index][2], Exception):
                    delay = max(delay or 0, outcomes.backoff(1))
                else:
                    done.append(kept)
            elif result.outcome is Outcome.RETRY:
                delay = max(delay or 0, outcomes.delay(kept.record, result))
        if run.stalled_on is not None and delay is None:  # a buffered job failed: the group is not done
            delay = outcomes.backoff(run.stalled_on[1])
        return done, delay

    def _resume(self, header: ParkHeader, state: GroupState) -> tuple[GroupState, list[_Sent]]:
        """Rule 1: the state unparked as the operator chose, and the skipped buffered dead job sent."""
        dead = state.book.parked
        if dead is None:
            return state, []
        resumed = resume_group(state, skip_dead=header.skip_dead, first_seq=self._settings.first_seq)
        left = {entry.job_id for entry in resumed.book.buffer}
        skipped = [e for e in state.book.buffer if e.job_id == dead.job_id and e.job_id not in left]
        return resumed, [
            self._send(buffered_record(entry, header.group), dead, header.group, copy=False)
            for entry in skipped
        ]

    def _send(self, record: SQSRecord, dead: DeadJob, group: str, *, copy: bool) -> _Sent:
        message = self._outcomes.letter(
            dead, group=group, body=str(record.get("body", "")), message_id=record.get("messageId"), copy=copy
        )
        return record, message, self._outcomes.send(message)

    def _header_after(
        self,
        header: ParkHeader,
        run: BatchResult,
        done: list[KeptRecord],
        delay: int | None,
        *,
        full: bool,
        now: int,
    ) -> tuple[ParkHeader | None, list[dict[str, Any]]]:
        """Rule 2: the header after the page, and the transaction items that write it."""
        parking = self._parking
        if run.parked_by is not None:
            dead = run.parked_by
            return parking.advance_items(header, done=done, status=PARKED, retry_at_ms=0, dead=dead)
        if delay is not None:
            return parking.advance_items(header, done=done, retry_at_ms=now + delay * 1000)
        if full:
            return parking.advance_items(header, done=done)
        return None, parking.finish_items(header, done=done)

    def _lines(
        self,
        group: str,
        page: list[KeptRecord],
        *,
        run: BatchResult,
        recorder: RecordingTransition,
        sends: tuple[list[_Sent], list[OwedSend], dict[int, _Sent]],
    ) -> None:
        """After the commit: one line per replayed record (a record still kept has its line already)."""
        outcomes = self._outcomes
        skipped, owed, sent_kept = sends
        for record, message, sent in skipped:
            outcomes.dead_line(record, message, sent, ran=False, fromBuffer=True, skipped=True, replayed=True)
        for send in owed:
            self._owed.line(send, replayed=True)
        outcomes.buffer_lines(run, recorder, group, page[0].record if page else None, replayed=True)
        for index, (kept, result) in enumerate(zip(page, run.results, strict=True)):
            if index in sent_kept:
                record, message, sent = sent_kept[index]
                ran = result.job_id in self._died  # it died in the page before (else: counted then)
                outcomes.dead_line(record, message, sent, ran=ran, action=_KEPT_ACTION, replayed=True)
            elif result.outcome is not Outcome.DEAD and (
                result.outcome is not Outcome.KEEP or result.dead is not None
            ):  # a job that died in this page has its line when it is sent, next page
                outcomes.line(
                    kept.record,
                    run.jobs[index],
                    result,
                    run,
                    recorder,
                    retry_action=_KEPT_ACTION,
                    replayed=True,
                )
        buffered_parker = run.parked_by is not None and not any(
            r.outcome is Outcome.KEEP and r.dead is not None for r in run.results
        )
        outcomes.group_metrics(
            run, group, page[0].record if page else None, parked_without_record=buffered_parker
        )
