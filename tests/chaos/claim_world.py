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

from constructs_fifo.runtime.claim.processor import OrderedBatchProcessor
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.settings.config import RuntimeConfig

from .calls import Point
from .history import ClaimSeen
from .world import CLAIMS, GROUPS, ChaosWorld

#: The status a claim item has when an operator deleted it (a reset), or it never existed.
NO_CLAIM = "NONE"


class ClaimWorld(ChaosWorld):
    """Claim mode; see the module docstring."""

    crashes_count = True

    def processor(self) -> OrderedBatchProcessor:
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
            claims=self.claim_store(),
            visibility=self.visibility(logger),
            logger=logger,
            dead_letters=self.dead_letter_sender(),
            parking=ParkStore(GROUPS, self.dynamodb, clock=self.clock) if park else None,
            sqs=self.sqs,
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
        if not job_id:
            return
        status = self.claim_status(str(job_id))
        if point.operation == "PutItem" and status == "IN_FLIGHT":
            self.history.claims_taken[str(job_id)] += 1
        self.history.claims.append(
            ClaimSeen(self.history.tick(), worker, str(job_id), status, point.operation)
        )
