"""State mode's dead letters owed: buffered jobs that died, committed dead before they are sent.

A job waiting in the reorder buffer has no record of its own (it was deleted when the job was
buffered). When it dies (go-on policy), nothing could be reported if its dead-letter send failed
after the commit, and a send before the commit would leave it in the dead-letter queue yet not dead
in the state if the worker stopped before the commit (its next run could apply it). So:

1. **Commit first.** The commit records the job dead (as every dead job) and *owed*
   (``book.owed``: its body and dead entry).
2. **Then send** (:meth:`OwedLetters.send_new`). When every send went through, one conditional write
   on the committed version clears what is owed (a lost race leaves it to the winner, which read it
   and sends it too). A send that fails leaves it owed, and the caller reports one of the group's
   records (or its wake-up message) so that the group comes back.
3. **What is owed goes first.** A run of a group that owes dead letters sends them before anything
   else (:meth:`OwedLetters.pay`) and its commit clears them; if a send fails, nothing of the run is
   committed and its records come back. So at most one run's dead buffered jobs are ever owed.

A letter sent twice (a crash between the send and the clearing write, a lost race) has the same
deduplication id (derived from the buffered job's message id): SQS collapses the copies within its
5-minute window. Nothing owed is dropped. Only a group whose buffered job died pays the extra write;
a book without ``owed`` (every other one, and those written before it existed) reads as nothing owed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.job import record_group, record_message_id
from constructs_fifo.runtime.state.outcomes import buffered_record

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.batch_report import BatchReport
    from constructs_fifo.runtime.dead_jobs.letters import DeadLetter
    from constructs_fifo.runtime.state.core.records import BufferedJob, GroupState
    from constructs_fifo.runtime.state.outcomes import StateOutcomes
    from constructs_fifo.runtime.state.storage.runs import RunMarker
    from constructs_fifo.runtime.state.storage.store import StateStore
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["OwedLetters", "OwedSend", "owing"]


@dataclass(frozen=True)
class OwedSend:
    """One dead letter sent (or not): the record standing for the buffered job, its message, the
    DLQ message id or the exception."""

    record: SQSRecord
    message: DeadLetter
    sent: str | Exception

    @property
    def failed(self) -> bool:
        """Whether the send failed."""
        return isinstance(self.sent, Exception)


def owing(group_state: GroupState, dead: tuple[tuple[BufferedJob, DeadJob], ...]) -> GroupState:
    """``group_state`` owing exactly ``dead`` (what it owed before was paid before the run)."""
    return replace(group_state, book=replace(group_state.book, owed=tuple(dead)))


class OwedLetters:
    """Sends a group's dead letters owed, and clears them once sent; see the module docstring."""

    def __init__(self, outcomes: StateOutcomes, states: StateStore) -> None:
        self._outcomes = outcomes
        self._states = states

    def pay(self, read: GroupState, like: SQSRecord | None = None) -> list[OwedSend]:
        """Rule 3: send what ``read`` owes, before anything of the run.

        Raises
        ------
        Exception
            The first send that failed (the others were tried): commit nothing, report the records.
        """
        sends = self._send_all(read, read.book.owed, like)
        failed = next((send.sent for send in sends if isinstance(send.sent, Exception)), None)
        if failed is not None:
            for send in sends:
                self.line(send, paid=True)
            raise failed
        return sends

    def send_new(
        self,
        committed: GroupState,
        version: int,
        like: SQSRecord | None = None,
        *,
        run: RunMarker | None = None,
    ) -> tuple[list[OwedSend], bool]:
        """Rule 2: after the commit (the item at ``version``), send what it owes; clear it when all went.

        ``run`` is the run marker the commit kept (the clearing write keeps it too). A clearing write
        that fails, or loses its race, is logged: what stays owed is sent again by the group's next
        run. Returns the sends and whether the clearing write committed (the item is then at
        ``version + 1``).
        """
        sends = self._send_all(committed, committed.book.owed, like)
        cleared = False
        if sends and not any(send.failed for send in sends):
            try:
                cleared = self._states.commit(committed.group, owing(committed, ()), version, run=run)
            except Exception as exc:  # still owed: sent again (same deduplication id) by the next run
                self._outcomes.out.logger.event(
                    {
                        "event": "owed_dead_letters_not_cleared",
                        "group": committed.group,
                        "error": describe(exc),
                        "action": "the group's next run sends them again (SQS drops a copy within 5 minutes)",
                    }
                )
        return sends, cleared

    def come_back(self, record: SQSRecord, report: BatchReport) -> None:
        """Rule 2: a group still owing a dead letter after its commit comes back: ``record`` (one of
        its records, or its wake-up message; its redelivery is a duplicate) is reported, unless it is
        already."""
        if record_message_id(record) not in report.failures:
            report.report(record, self._outcomes.backoff(1))
            report.blocked.setdefault(record_group(record), self._outcomes.backoff(1))

    def line(self, send: OwedSend, *, paid: bool = False, **fields: Any) -> None:
        """The outcome line of one owed send (``paid``: a letter owed by an earlier run)."""
        fields.setdefault("fromBuffer", True)
        action = (
            "still owed in the group's state: sent again before the group's next run; the group's "
            "record is reported so that it comes back"
        )
        if paid:
            fields["owedByEarlierRun"] = True
        self._outcomes.dead_line(send.record, send.message, send.sent, ran=not paid, action=action, **fields)

    def _send_all(
        self, group_state: GroupState, owed: tuple[tuple[BufferedJob, DeadJob], ...], like: SQSRecord | None
    ) -> list[OwedSend]:
        outcomes, group = self._outcomes, group_state.group
        sends = []
        for entry, dead in owed:
            record = buffered_record(entry, group, like)
            message = outcomes.letter(dead, group=group, body=str(record.get("body", "")))
            sends.append(OwedSend(record, message, outcomes.send(message)))
        return sends
