"""A cancelling group in state mode: what a group cancel's header does to the records it meets.

The rules are :mod:`constructs_fifo.runtime.steering.group_cancel`'s (docs/steering.md, "Cancel a
group's jobs"); the processor runs the jobs before the marker through the core with them entered as
cancelled (their places closed, with the state, in one commit), and sends what came after the marker
back to the live group once the header is gone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from constructs_fifo.runtime.batch_report import BatchReport, job_id_of
from constructs_fifo.runtime.job import parse_record
from constructs_fifo.runtime.observability import RETRY_ACTION, OutcomeStatus
from constructs_fifo.runtime.state.core.records import CancelEntry, GroupState
from constructs_fifo.runtime.state.storage.cancels import SeqRequiredError, decide_state_cancel
from constructs_fifo.runtime.steering.group_cancel import CANCELLED_ACTION, CancelThrough
from constructs_fifo.runtime.steering.metrics import write_steered
from constructs_fifo.runtime.steering.names import MAX_CANCELLED_IDS
from constructs_fifo.runtime.steering.report import CancelOutcome

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.dead_jobs.parking import ParkHeader
    from constructs_fifo.runtime.observability import OutcomeWriter
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["cancel_before_marker", "send_back_after_marker"]


def cancel_before_marker(
    header: ParkHeader, split: CancelThrough, state: GroupState, out: OutcomeWriter
) -> tuple[GroupState, list[SQSRecord]]:
    """The group's state with the jobs before the marker (up to the header's ``seq``, if any) entered as
    cancelled (not one it applied or that died: the one-job rules), and the records among them the core
    closes; a record without a job id is written
    ``CANCELLED`` here (it never runs, and never parks the group)."""
    up_to_seq = header.dead.seq
    entries = [
        CancelEntry(job_id, header.dead.at_ms, header.dead.error, header.dead.error_type)
        for job_id, seq in (_id_and_seq(record) for record in split.before)
        if job_id is not None
        and (up_to_seq is None or (seq is not None and seq <= up_to_seq))
        and _cancellable(job_id, seq, state)
    ]
    known = state.cancelled_ids
    cancelled = (*state.cancelled, *(e for e in entries if e.job_id not in known))[-MAX_CANCELLED_IDS:]
    jobs = [record for record in split.before if _id_and_seq(record)[0] is not None]
    for record in split.before:
        if _id_and_seq(record)[0] is None:
            write_steered(out, OutcomeStatus.CANCELLED, record, action=CANCELLED_ACTION)
    return replace(state, cancelled=cancelled), jobs


def send_back_after_marker(out: OutcomeWriter, records: list[SQSRecord], report: BatchReport) -> None:
    """Records sent after the group's cancel, met in the batch that ended it: back to the live group now."""
    for record in records:
        out.write(
            OutcomeStatus.DEADLINE,
            record,
            job_id=job_id_of(record),
            action=f"not applied yet: sent after its group's cancel, it comes back to the live group; "
            f"{RETRY_ACTION}",
            visibilityTimeout=0,
        )
        report.report(record, 0)


def _cancellable(job_id: str, seq: int | None, state: GroupState) -> bool:
    """Whether the one-job rules cancel the job: never one the group applied or that died (a copy of
    it before the marker is the core's duplicate, or dead copy, as anywhere else). Entering an applied
    job's copy as cancelled made ``JobOutcomes`` report a job that was applied ``cancelled`` (found by the
    chaos suite's state-mode newest-wins property: a copy sent past SQS's five minutes, then a live
    group cancel)."""
    try:
        outcome = decide_state_cancel(job_id, state, seq=seq).outcome
    except SeqRequiredError:  # a job without its seq in a group of seqs: its place is unknown
        return True
    return outcome is not CancelOutcome.SUCCEEDED and outcome is not CancelOutcome.DEAD


def _id_and_seq(record: SQSRecord) -> tuple[str | None, int | None]:
    """A record's job id and ``seq`` (``None`` for what its body does not give)."""
    try:
        job = parse_record(record)
    except Exception:  # a malformed body: no job id to cancel by
        return None, None
    seq = job.body.get("seq") if isinstance(job.body, dict) else None
    return job.id, seq if isinstance(seq, int) and not isinstance(seq, bool) else None
