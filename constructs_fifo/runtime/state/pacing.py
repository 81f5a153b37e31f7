"""State mode's pacing: how many of a live group's records may be applied now under the ``pace`` limit.

A group's records are applied and committed together, so its tokens are taken together, before the
run: records in order, each run of consecutive records of one key value with **one** ``UpdateItem``
of up to that many tokens (:meth:`~constructs_fifo.runtime.steering.pace_store.PaceStore.take`). The
records before the first one without a token are applied as usual; that one and every record behind
it are reported with the wait until the token is due (``PACED``, then ``SKIPPED``): never dropped,
never reordered, no attempt counted (nothing of them was applied or recorded). A record whose key is
absent takes no token. Tokens of records the run then finds duplicates, or of a run whose commit loses
its race, are spent (conservative). A held or parked group keeps its records without a token; its
replay takes them page by page (:func:`take_tokens`, :mod:`constructs_fifo.runtime.state.replay`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.batch_report import job_id_of
from constructs_fifo.runtime.job import record_group
from constructs_fifo.runtime.observability import RETRY_ACTION, OutcomeStatus
from constructs_fifo.runtime.steering.metrics import write_paced
from constructs_fifo.runtime.steering.pace import pace_key_of, wait_seconds

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.batch_report import BatchReport
    from constructs_fifo.runtime.observability import OutcomeWriter
    from constructs_fifo.runtime.steering.pace_store import PaceStore
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["paced_prefix", "take_tokens"]


def _body(record: SQSRecord) -> Any:
    try:
        return json.loads(str(record.get("body", "")))
    except ValueError:
        return None


def paced_prefix(
    pace: PaceStore, records: list[SQSRecord], report: BatchReport, out: OutcomeWriter, cap_seconds: int
) -> list[SQSRecord]:
    """The records of one group that hold a token now (a prefix of ``records``); the rest are reported."""
    holding, due_ms = take_tokens(pace, records)
    if holding < len(records):
        waiting = records[holding:]
        key = pace_key_of(pace.limit.key, waiting[0], _body(waiting[0])) or ""
        _report_paced(waiting, key, wait_seconds(due_ms, pace.now_ms(), cap_seconds), report, out)
    return records[:holding]


def take_tokens(pace: PaceStore, records: list[SQSRecord]) -> tuple[int, int]:
    """Take the tokens of ``records`` (one group's, in order): how many of them hold one now (a prefix:
    a record without the key's value holds one), and when the first one without is due (epoch ms).

    Each run of consecutive records of one key value takes its tokens with one ``UpdateItem``; the
    first run short of tokens ends the prefix. A resuming group's replay takes its kept records' tokens
    page by page through it too (:mod:`constructs_fifo.runtime.state.replay`).
    """
    keys = [pace_key_of(pace.limit.key, record, _body(record)) for record in records]
    start = 0
    while start < len(records):
        key = keys[start]
        end = start + 1
        while end < len(records) and keys[end] == key:
            end += 1
        if key is not None:
            taken = pace.take(key, end - start)
            if taken.granted < end - start:
                return start + taken.granted, taken.due_ms
        start = end
    return len(records), pace.now_ms()


def _report_paced(
    waiting: list[SQSRecord], key: str, delay: int, report: BatchReport, out: OutcomeWriter
) -> None:
    first, *behind = waiting
    write_paced(out, first, key=key, delay_seconds=delay, job_id=job_id_of(first))
    report.report(first, delay)
    group = record_group(first)
    for record in behind:
        out.write(
            OutcomeStatus.SKIPPED,
            record,
            job_id=job_id_of(record),
            action=f"not run: an earlier record of group {group!r} waits for its pace key; {RETRY_ACTION}",
            visibilityTimeout=delay,
        )
        report.report(record, delay)
    report.blocked[group] = delay
