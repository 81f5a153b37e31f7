"""Figure 10: what waiting for a job's outcome costs, in DynamoDB read units per poll.

``JobOutcomes.get`` (one poll of ``wait``) runs against the in-memory responder
(:mod:`benchmarks.responder`), which meters every read by DynamoDB's rules (:mod:`benchmarks.capacity`:
1 unit per 4 KB of a strongly consistent read), over items the runtime's own code writes: claims taken
and completed by ``ClaimStore`` (a result of the size named stored by the runtime's result codec), and
state items encoded by the state store's ``encode_item``. At ``wait``'s 1 s cap one poll a second is
made, so read units per poll are read units per second of waiting. ``wait_many`` reads a hundred jobs
in one ``BatchGetItem`` a poll: the same read units as a hundred waits, in one request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.responder import Responder, TableSpec
from benchmarks.workload import REGION, aws_environment

__all__ = ["OutcomeRead", "measure_outcome_reads"]

_CLAIMS = "bench-outcome-claims"
_GROUPS = "bench-outcome-groups"
_GROUP = "ws#1"
_NOW_S = 1_700_000_000.0


@dataclass(frozen=True)
class OutcomeRead:
    """One case: the status read and the read units one poll of it consumed."""

    mode: str
    case: str
    status: str
    read_units: float
    calls: int


def measure_outcome_reads() -> list[OutcomeRead]:
    """Read units of one poll in each case (claim mode's claims, state mode's state sizes)."""
    aws_environment()
    import boto3  # noqa: PLC0415 - keep importing this module cheap

    from constructs_fifo.client.outcomes import JobOutcomes  # noqa: PLC0415 - the code measured
    from constructs_fifo.runtime.aws_limits import DYNAMODB_MAX_BATCH_GET_KEYS  # noqa: PLC0415
    from constructs_fifo.runtime.claim.result import encode_result  # noqa: PLC0415
    from constructs_fifo.runtime.claim.store import ClaimStore  # noqa: PLC0415
    from constructs_fifo.runtime.constants import DeadReason  # noqa: PLC0415

    dynamodb = boto3.client("dynamodb", region_name=REGION)
    responder = Responder([TableSpec(_CLAIMS, "id"), TableSpec(_GROUPS, "group", "sk")])
    responder.attach(dynamodb)
    reads: list[OutcomeRead] = []
    try:
        store = ClaimStore(_CLAIMS, dynamodb, clock=lambda: _NOW_S)
        outcomes = JobOutcomes(
            claim_table=_CLAIMS, group_table=_GROUPS, dynamodb=dynamodb, clock=lambda: _NOW_S
        )

        def poll(mode: str, case: str, job_id: str, reader: Any = outcomes, **options: Any) -> None:
            before, calls = responder.capacity.read_units, sum(responder.calls.values())
            outcome = reader.get(job_id, **options)
            units = responder.capacity.read_units - before
            reads.append(
                OutcomeRead(mode, case, outcome.status.value, units, sum(responder.calls.values()) - calls)
            )

        poll("claim", "no claim yet (job id only)", "queued", sent=True)
        poll("claim", "no claim yet, group given (its park header too)", "queued", group=_GROUP, sent=True)
        store.claim(_job("running"), lease_ms=60_000)
        poll("claim", "running (IN_FLIGHT claim)", "running")
        dead = store.claim(_job("dead"), lease_ms=60_000)
        store.mark_dead("dead", dead.owner or "", reason=DeadReason.PERMANENT, error="x", error_type="E")
        poll("claim", "dead (DEAD claim, its group's park header too)", "dead", group=_GROUP)
        many = [f"many-{n}" for n in range(DYNAMODB_MAX_BATCH_GET_KEYS)]
        for job_id in many:
            store.claim(_job(job_id), lease_ms=60_000)
        before, calls = responder.capacity.read_units, sum(responder.calls.values())
        outcomes.wait_many(many, 0)  # a timeout of 0: one poll
        reads.append(
            OutcomeRead(
                "claim",
                f"{len(many)} running jobs at once (wait_many: one BatchGetItem a poll)",
                "running",
                responder.capacity.read_units - before,
                sum(responder.calls.values()) - calls,
            )
        )
        for label, size in (("no result", 0), ("1 KB result", 1024), ("64 KiB result", 64 * 1024 - 2)):
            job_id = f"done-{size}"
            claim = store.claim(_job(job_id), lease_ms=60_000)
            text, _ = encode_result("x" * size if size else None)
            store.complete(job_id, claim.owner or "", result_json=text)
            poll("claim", f"succeeded, {label} (the last poll)", job_id)
        states = JobOutcomes(group_table=_GROUPS, dynamodb=dynamodb)
        for label, size in (("0.1 KB", 100), ("10 KB", 10 * 1024), ("100 KB", 100 * 1024)):
            group = f"state-{size}"
            dynamodb.put_item(TableName=_GROUPS, Item=_state_item(group, size))
            poll(
                "state",
                f"state item of {label}, not applied yet",
                "queued",
                reader=states,
                group=group,
                sent=True,
            )
            poll("state", f"state item of {label}, applied", "applied", reader=states, group=group)
    finally:
        responder.detach()
    if responder.errors:
        raise RuntimeError("figure 10: requests outside the in-memory model: " + "; ".join(responder.errors))
    return reads


def _job(job_id: str) -> Any:
    from constructs_fifo.runtime.job import Job  # noqa: PLC0415

    return Job(job_id, _GROUP, "run_tests", {}, 1, f"m-{job_id}", {})


def _state_item(group: str, state_bytes: int) -> dict[str, Any]:
    """A group's state item as the state store writes it, with job ``applied`` remembered."""
    from constructs_fifo.runtime.state.core.records import Bookkeeping, GroupState, job_key  # noqa: PLC0415
    from constructs_fifo.runtime.state.storage.store import encode_item  # noqa: PLC0415

    state = GroupState(group, {"blob": "x" * state_bytes}, 1, Bookkeeping(applied=(job_key("applied"),)))
    return encode_item(state, version=1, now_ms=int(_NOW_S * 1000))
