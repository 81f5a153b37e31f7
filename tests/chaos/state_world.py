"""The chaos world in state mode: the real ``StateBatchProcessor`` with its group table.

The transition is pure: it appends the job's id to the group state's ``log`` (after doing what the
job's kind says), so the committed log is the fold of what was applied, in the order it was applied.
Its runs are recorded, but a run is not an effect here: only a commit is. After every successful
write to the group table the state item of each group the write touched is read back, so the
history holds every version ever committed, with its log.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from constructs_fifo.runtime.constants import GROUP_ATTR_GROUP, STATE_ATTR_RUN, STATE_SK, JobMode
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.settings.config import RuntimeConfig
from constructs_fifo.runtime.state.processor import StateBatchProcessor
from constructs_fifo.runtime.state.storage.store import StateStore, decode_item

from .calls import Point
from .history import StateSeen
from .world import GROUPS, ChaosWorld


class StateWorld(ChaosWorld):
    """State mode; see the module docstring."""

    crashes_count = True  # a run marker names the transition that stopped its worker
    has_claims = False
    mode = JobMode.STATE

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: job id -> the workers that wrote a run marker naming it (an attempt the runtime may count).
        self.marked: defaultdict[str, set[str]] = defaultdict(set)

    def tried(self, job_id: str) -> set[str]:
        """The workers that ran ``job_id`` or marked it: each may have cost it one attempt."""
        return {run.worker for run in self.history.runs_of(job_id)} | self.marked[job_id]

    def processor(self) -> StateBatchProcessor:
        logger = self.logger()
        return StateBatchProcessor(
            settings=RuntimeConfig(
                "",
                self.model.url,
                mode=JobMode.STATE,
                on_dead_job=self.config.policy,
                max_attempts=self.config.max_attempts,
                backoff_base_seconds=2,
                visibility_timeout_seconds=self.config.visibility_s,
            ),
            transition=self.transition,
            states=StateStore(GROUPS, self.dynamodb, clock=self.clock, sleep=lambda _: None),
            parking=ParkStore(GROUPS, self.dynamodb, clock=self.clock),
            visibility=self.visibility(logger),
            logger=logger,
            dead_letters=self.dead_letter_sender(),
            sqs=self.sqs,
            pace_store=self.pace_store(),
        )

    def transition(self, job: Job, state: dict[str, Any] | None) -> dict[str, Any]:
        """The user's transition: what the job's kind says, then the job's id appended to ``log``."""
        spec = self.workload.spec(job.id)
        run = self.start_run(job)
        try:
            self.misbehave(spec, len(self.history.runs_of(job.id)))
            run.completed = True
        finally:
            self.history.end_run(run)
        return {"log": [*(state or {}).get("log", []), job.id]}

    def committed_log(self, group: str) -> list[str]:
        """The group's committed log now."""
        item = self._state_item(group)
        state = decode_item(item).state if item else None
        return list((state or {}).get("log", []))

    def buffered_job_ids(self, group: str) -> list[str]:
        """The job ids waiting in the group's reorder buffer (committed with its state)."""
        item = self._state_item(group)
        return [entry.job_id for entry in decode_item(item).book.buffer] if item else []

    def observe_write(self, point: Point, worker: str) -> None:
        if point.target != GROUPS:
            return
        marked = _marked_job(point.params)
        if marked is not None:
            self.marked[marked].add(worker)
        for group in _groups_written(point.params):
            item = self._state_item(group)
            if item is None:
                continue
            state = decode_item(item)
            seen = [s for s in self.history.states if s.group == group]
            if seen and seen[-1].version == state.version:
                continue
            log = tuple((state.state or {}).get("log", []))
            self.history.states.append(StateSeen(self.history.tick(), worker, group, state.version, log))

    def _state_item(self, group: str) -> dict[str, Any] | None:
        key = {GROUP_ATTR_GROUP: {"S": group}, "sk": {"S": STATE_SK}}
        item = self.reader.get_item(TableName=GROUPS, Key=key, ConsistentRead=True).get("Item")
        return dict(item) if item else None


def _marked_job(params: dict[str, Any]) -> str | None:
    """The job a PutItem or UpdateItem of the group table marked as about to run, if any."""
    value = (params.get("Item") or {}).get(STATE_ATTR_RUN) or (
        params.get("ExpressionAttributeValues") or {}
    ).get(":run")
    if not value:
        return None
    job = json.loads(value["S"]).get("job")
    return None if job is None else str(job)


def _groups_written(params: dict[str, Any]) -> list[str]:
    """The groups a PutItem, UpdateItem, DeleteItem or TransactWriteItems of the group table wrote."""
    keys: list[dict[str, Any]] = [params.get("Item") or params.get("Key") or {}]
    for item in params.get("TransactItems", []):
        for action in item.values():
            keys.append(action.get("Item") or action.get("Key") or {})
    return list(dict.fromkeys(str(key[GROUP_ATTR_GROUP]["S"]) for key in keys if GROUP_ATTR_GROUP in key))
