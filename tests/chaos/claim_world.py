"""The chaos world in claim mode: the real ``OrderedBatchProcessor`` with its claim table.

The job function records each run in the history and passes two scheduling points: ``job.start``
(after the claim: a crash there is a run that started and never finished) and ``job.end`` (after
the side effect, before the SUCCEEDED write: a crash there is the documented window in which a job
runs again). The side effect itself is the run's ``completed`` flag. After every successful write to
the claim table the claim item is read back, so the history knows when each claim was taken
(``IN_FLIGHT``), committed (``SUCCEEDED``), declared dead (``DEAD``) or reset by an operator.
"""

from __future__ import annotations

from typing import Any

from constructs_fifo.runtime.batch_processor import NO_HEARTBEAT, Heartbeat
from constructs_fifo.runtime.claim.processor import OrderedBatchProcessor
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import ATTR_ATTEMPTS, ATTR_ERROR_TYPE, ATTR_SHARED, DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.runtime.steering.names import SUPERSEDE_KEY_PREFIX
from constructs_fifo.runtime.steering.pace_store import PACE_BUCKET_PREFIX

from .calls import Point
from .history import ClaimSeen, Run
from .world import CLAIMS, GROUPS, ChaosWorld

#: The status a claim item has when an operator deleted it (a reset), or it never existed.
NO_CLAIM = "NONE"


class ClaimWorld(ChaosWorld):
    """Claim mode; see the module docstring."""

    crashes_count = True

    def processor(self) -> OrderedBatchProcessor:
        return self.claim_processor(self.claim_store())

    def claim_processor(
        self, claims: ClaimStore, heartbeat: Heartbeat = NO_HEARTBEAT
    ) -> OrderedBatchProcessor:
        """The processor of one invocation (or one worker slot: its claims and heartbeat)."""
        logger = self.logger()
        park = self.config.policy is DeadJobPolicy.PARK
        return OrderedBatchProcessor(
            settings=RuntimeConfig(
                CLAIMS,
                self.model.url,
                on_dead_job=self.config.policy,
                backoff_base_seconds=2,
                visibility_timeout_seconds=self.config.visibility_s,
            ),
            handler=self.handle,
            claims=claims,
            heartbeat=heartbeat,
            visibility=self.visibility(logger),
            logger=logger,
            dead_letters=self.dead_letter_sender(),
            parking=ParkStore(GROUPS, self.dynamodb, clock=self.clock) if park else None,
            sqs=self.sqs,
            pace_store=self.pace_store(),
        )

    def claim_store(self) -> ClaimStore:
        """The claim store of one invocation (a negative control overrides it)."""
        return ClaimStore(
            CLAIMS, self.dynamodb, ttl_seconds=86_400, max_attempts=self.config.max_attempts, clock=self.clock
        )

    def handle(self, job: Job, context: Any) -> None:
        """The job function: a recorded run with a point after the claim and one after the effect."""
        spec = self.workload.spec(job.id)
        run = self.start_run(job)
        number = len(self.history.runs_of(job.id))
        try:
            self.gate.job_point("start", job.id)
            self.misbehave(spec, number)
            run.completed = True  # the side effect
        finally:
            self.history.end_run(run)
        self.gate.job_point("end", job.id)

    def claim_item(self, job_id: str) -> dict[str, Any]:
        """The claim item now, as stored (empty when there is none)."""
        key = {"id": {"S": job_id}}
        return dict(self.reader.get_item(TableName=CLAIMS, Key=key, ConsistentRead=True).get("Item", {}))

    def claim_status(self, job_id: str) -> str:
        """The claim item's status now (``NO_CLAIM`` when there is none)."""
        item = self.claim_item(job_id)
        return str(item["status"]["S"]) if item else NO_CLAIM

    def observe_write(self, point: Point, worker: str) -> None:
        if point.target != CLAIMS:
            return
        key = point.params.get("Item") or point.params.get("Key") or {}
        job_id = key.get("id", {}).get("S")
        if not job_id or str(job_id).startswith((SUPERSEDE_KEY_PREFIX, PACE_BUCKET_PREFIX)):
            return  # a supersede key's marker, a pace key's bucket
        item = self.claim_item(str(job_id))
        status = str(item["status"]["S"]) if item else NO_CLAIM
        if point.operation == "PutItem" and status == "IN_FLIGHT":
            self.history.claims_taken[str(job_id)] += 1
        self.history.claims.append(
            ClaimSeen(
                self.history.tick(),
                worker,
                str(job_id),
                status,
                point.operation,
                attempts=int(item.get(ATTR_ATTEMPTS, {}).get("N", 0)),
                shared=bool(item.get(ATTR_SHARED, {}).get("BOOL", False)),
                error_type=str(item.get(ATTR_ERROR_TYPE, {}).get("S", "")),
            )
        )

    def commit_refused_locally(self, run: Run) -> bool:
        """Whether ``run``'s commit was refused before it was sent (a worker's stale heartbeat); never
        on the function."""
        return False
