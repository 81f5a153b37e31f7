"""The worker's own writes on a job's claim item, beside the claim store's (as a canceller's are):
isolating a run that must run alone, and giving a stopped run back.

Both are conditional ``UpdateItem`` calls fenced on the run's owner token and its live ``IN_FLIGHT``
status (:mod:`constructs_fifo.runtime.claim.store`'s rules 4 and 7), made only on a worker's rare paths:
after a crash, and at the end of a stop's grace. The function never makes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructs_fifo.runtime.constants import (
    ATTR_ATTEMPTS,
    ATTR_ERROR,
    ATTR_ERROR_TYPE,
    ATTR_ID,
    ATTR_LEASE_EXPIRES_AT,
    ATTR_OWNER,
    ATTR_SHARED,
    ATTR_STATUS,
    ATTR_UPDATED_AT,
    STATUS_FAILED,
    STATUS_IN_FLIGHT,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.claim.store import ClaimStore

__all__ = ["WORKER_STOPPED", "give_back", "isolate"]

#: The error type of a run given back by its stopping worker (not an attempt).
WORKER_STOPPED = "WorkerStopped"


def isolate(store: ClaimStore, job_id: str, owner: str) -> bool:
    """Mark ``owner``'s live run alone in its process (rule 7: its lease running out is then counted);
    ``False``: another worker holds the claim, or the lease ran out."""
    now_ms = store.now_ms()
    try:
        store.client.update_item(
            TableName=store.table_name,
            Key={ATTR_ID: {"S": job_id}},
            UpdateExpression="SET #updated_at = :now REMOVE #shared",
            ConditionExpression="#owner = :me AND #status = :in_flight AND #lease >= :now",
            ExpressionAttributeNames={
                "#updated_at": ATTR_UPDATED_AT,
                "#shared": ATTR_SHARED,
                "#owner": ATTR_OWNER,
                "#status": ATTR_STATUS,
                "#lease": ATTR_LEASE_EXPIRES_AT,
            },
            ExpressionAttributeValues={
                ":me": {"S": owner},
                ":in_flight": {"S": STATUS_IN_FLIGHT},
                ":now": {"N": str(now_ms)},
            },
        )
    except store.client.exceptions.ConditionalCheckFailedException:
        return False
    return True


def give_back(store: ClaimStore, job_id: str, owner: str) -> bool:
    """Give ``owner``'s live run back without counting it (its worker is stopping: a deploy, a scale-in,
    a Spot interruption): FAILED with one attempt fewer, so the retake (rule 3) runs it as the same
    attempt; ``False``: another worker holds the claim, or it is no longer IN_FLIGHT."""
    try:
        store.client.update_item(
            TableName=store.table_name,
            Key={ATTR_ID: {"S": job_id}},
            UpdateExpression="SET #status = :failed, #attempts = #attempts - :one, #updated_at = :now,"
            " #error = :error, #error_type = :error_type REMOVE #lease",
            ConditionExpression="#owner = :me AND #status = :in_flight",
            ExpressionAttributeNames={
                "#status": ATTR_STATUS,
                "#attempts": ATTR_ATTEMPTS,
                "#updated_at": ATTR_UPDATED_AT,
                "#error": ATTR_ERROR,
                "#error_type": ATTR_ERROR_TYPE,
                "#lease": ATTR_LEASE_EXPIRES_AT,
                "#owner": ATTR_OWNER,
            },
            ExpressionAttributeValues={
                ":me": {"S": owner},
                ":in_flight": {"S": STATUS_IN_FLIGHT},
                ":failed": {"S": STATUS_FAILED},
                ":one": {"N": "1"},
                ":now": {"N": str(store.now_ms())},
                ":error": {"S": "its worker stopped before the run ended (not counted as an attempt)"},
                ":error_type": {"S": WORKER_STOPPED},
            },
        )
    except store.client.exceptions.ConditionalCheckFailedException:
        return False
    return True
