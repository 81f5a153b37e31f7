"""Claim mode's side of a live group's cancel: a ``CANCELLING`` group's records in a batch
(:mod:`constructs_fifo.runtime.steering.group_cancel` states the rules; this is their claim-mode form).

Each record before the marker is cancelled by the one-job rules
(:class:`~constructs_fifo.runtime.claim.cancel.ClaimCanceller`: its claim written ``CANCELLED``, so
``JobOutcomes`` says ``cancelled``, or ``STOPPED`` for one between attempts, or running on another
worker) and deleted without running; one that already succeeded (a redelivery) is a duplicate. One
whose claim is already ``DEAD`` is not cancelled (a cancel refuses a dead job) and is not dropped
either: it goes to the dead-letter queue, as any record of a dead job does when its group cannot park
(here: the cancel's header stands where the park header would). That is the job that died on its last
attempt while the header was written, its park refused by the header: deleting it lost the dead job,
with nothing kept and nothing dead-lettered (found by the chaos suite's live group cancel). At the
marker the header is deleted on condition of its version; the records after it come back at once.
Cost: one claim write per cancelled record (the claim call it would have made anyway) and one header
delete per cancel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.batch_report import BatchReport, job_id_of
from constructs_fifo.runtime.claim.cancel import ClaimCanceller
from constructs_fifo.runtime.observability import RETRY_ACTION, OutcomeStatus
from constructs_fifo.runtime.steering.group_cancel import CANCELLED_ACTION, split_at_marker
from constructs_fifo.runtime.steering.metrics import write_steered
from constructs_fifo.runtime.steering.report import CancelOutcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.claim.store import ClaimStore
    from constructs_fifo.runtime.dead_jobs.parking import ParkHeader, ParkStore
    from constructs_fifo.runtime.observability import OutcomeWriter
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["ClaimGroupCancel"]

#: The batch's error path: report a record with its group's delay, naming what failed.
OnError = Callable[..., None]
#: The processor's dead-letter path for a record whose claim (the decoded item) is DEAD; ``False``: not sent.
SendDead = Callable[["SQSRecord", "dict[str, Any]"], bool]


class ClaimGroupCancel:
    """Runs a cancelling group's records of one batch (see the module docstring)."""

    def __init__(
        self, claims: ClaimStore, parking: ParkStore | None, out: OutcomeWriter, *, send_dead: SendDead
    ) -> None:
        self._canceller = ClaimCanceller(
            claims.table_name, claims.client, ttl_seconds=claims.ttl_seconds, clock=claims.clock
        )
        self._claims = claims
        self._send_dead = send_dead
        self._parking = parking
        self._out = out

    def run(
        self, header: ParkHeader, records: list[SQSRecord], report: BatchReport, *, on_error: OnError
    ) -> ParkHeader | None:
        """Cancel the records before the marker, then end the cancel there; return the group's header
        (``None``: live again). ``on_error(record, exc, report, note=...)`` reports a record back."""
        split = split_at_marker(header, records)
        marker = [split.marker] if split.marker is not None else []
        for index, record in enumerate(split.before):
            try:
                self._cancel(record, header)
            except Exception as exc:  # this record and the group's next ones come back, in order
                for rest in [*split.before[index:], *marker, *split.after]:
                    on_error(rest, exc, report, note="the group cancel could not cancel it")
                return header
        if not split.ended:
            return header
        assert self._parking is not None  # a header was read: the group table is there
        try:
            self._parking.finish(header)
        except Exception as exc:  # met again: the marker and what follows come back
            for rest in [*marker, *split.after]:
                on_error(rest, exc, report, note="the group cancel's header could not be deleted")
            return header
        self._out.logger.event({"level": "INFO", "event": "group_cancel_done", "group": header.group})
        for record in split.after:
            self._out.write(
                OutcomeStatus.DEADLINE,
                record,
                job_id=job_id_of(record),
                action="not run yet: sent after its group's cancel, it comes back to the live group; "
                f"{RETRY_ACTION}",
                visibilityTimeout=0,
            )
            report.report(record, 0)
            report.blocked.setdefault(header.group, 0)
        return None

    def _cancel(self, record: SQSRecord, header: ParkHeader) -> None:
        """One record before the marker: its claim cancelled by the one-job rules, its line written."""
        job_id = job_id_of(record)
        reason, by = header.dead.error, header.dead.error_type
        if job_id is None:  # no job id: nothing to claim; it never runs and is never dead-lettered
            write_steered(self._out, OutcomeStatus.CANCELLED, record, action=CANCELLED_ACTION)
            return
        found = self._canceller.cancel(job_id, group=header.group, reason=reason, by=by)
        if found.outcome is CancelOutcome.DEAD:  # never dropped: it follows its job to the dead letters
            item = self._claims.get(job_id) or {}
            if not self._send_dead(record, item):
                raise RuntimeError(f"job {job_id!r} is dead and could not be sent to the dead-letter queue")
            return
        if found.outcome is CancelOutcome.SUCCEEDED:
            self._out.write(
                OutcomeStatus.DUPLICATE,
                record,
                job_id=job_id,
                action=f"not run: already {found.outcome.value} (the group cancel found it so); deleted",
            )
            return
        write_steered(
            self._out,
            OutcomeStatus.CANCELLED,
            record,
            job_id=job_id,
            action=CANCELLED_ACTION,
            cancelReason=reason or None,
            cancelledBy=by or None,
            whileRunning=found.running,
        )
