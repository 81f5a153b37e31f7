"""Wait for many jobs at once: one ``BatchGetItem`` a poll, each job given back as it settles.

An MCP server with twenty pending tool calls, an orchestrator fanning out a hundred jobs: each waited
for on its own would poll on its own (a read each, a thread each). :meth:`JobOutcomes.as_settled
<constructs_fifo.client.outcomes.JobOutcomes.as_settled>` and :meth:`JobOutcomes.wait_many
<constructs_fifo.client.outcomes.JobOutcomes.wait_many>` poll them together instead.

**One request a poll.** Every poll is one consistent ``BatchGetItem`` of at most
``DYNAMODB_MAX_BATCH_GET_KEYS`` (100) items, across the queue's tables:

* claim mode: the claim of every job not settled yet (a settled job is not read again), then, while
  there is room, the park headers of their groups, so a job without a claim reads ``parked`` (not
  ``pending``) when its group is parked, and a dead job says whether its group is parked at it. A job
  whose claim reads DEAD is given back once its group's header was read too (the next poll when
  there was no room in this one);
* state mode: the state item and the park header of each group with a job not settled yet (2 items a
  group, whatever the number of its jobs).

With more items than that (more than 100 jobs, or 50 groups in state mode), each poll reads the next
100 in turn, still one request, so a job is read every ceil(items / 100) polls. Keys DynamoDB leaves
unprocessed (throttling, the 16 MB answer limit) are read at the next poll.

**Cost a poll**: 1 request; read units are DynamoDB's per item, rounded up each (BatchGetItem), strongly
consistent: 1 per claim (below 4 KB; a SUCCEEDED claim with an N KB result ceil((N + 0.3) / 4), once),
1 per park header read, ceil(state item KB / 4) per state item. 100 jobs in claim mode: 1 request and
100 read units a poll, falling as they settle; at the 1 s pause cap, 1 request a second for them all
where 100 single waits make 100.

Pure but for the read: :class:`BatchPoll` plans and decodes, the caller's client does the request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from constructs_fifo.client.errors import OutcomeQueryError
from constructs_fifo.client.job_status import (
    JobOutcome,
    JobStatus,
    claim_outcome,
    ends_wait,
    is_dead_claim,
    state_outcome,
)
from constructs_fifo.client.state_reader import GroupStateReader, job_sighting
from constructs_fifo.runtime.aws_limits import DYNAMODB_MAX_BATCH_GET_KEYS
from constructs_fifo.runtime.claim.store import decode_claim
from constructs_fifo.runtime.constants import (
    ATTR_GROUP,
    ATTR_ID,
    GROUP_ATTR_GROUP,
    GROUP_ATTR_SK,
    SK_PARK,
    STATE_SK,
)
from constructs_fifo.runtime.dead_jobs.parking import ParkHeader, decode_header

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.state.core.records import GroupState

__all__ = ["MAX_ITEMS_PER_POLL", "BatchPoll", "JobRef", "JobRefLike", "ManyWait", "job_refs"]

#: Items one poll reads at most: one BatchGetItem request (DynamoDB's limit).
MAX_ITEMS_PER_POLL: Final = DYNAMODB_MAX_BATCH_GET_KEYS


@dataclass(frozen=True, slots=True)
class JobRef:
    """A job to wait for: its id, its group (required in state mode) and its ``seq`` (state mode)."""

    job_id: str
    group: str | None = None
    seq: int | None = None


class JobRefLike(Protocol):
    """Anything with a job's id, group and seq: a :class:`JobRef`, a ``JobMessage``."""

    @property
    def job_id(self) -> str: ...  # pragma: no cover - a protocol

    @property
    def group(self) -> str | None: ...  # pragma: no cover - a protocol

    @property
    def seq(self) -> int | None: ...  # pragma: no cover - a protocol


def job_refs(jobs: Iterable[str | JobRefLike], *, state_mode: bool) -> list[JobRef]:
    """The jobs as :class:`JobRef`, in their order: a job id alone, or anything with id, group, seq.

    Raises
    ------
    OutcomeQueryError
        An empty or repeated job id, or (state mode) a job without its group.
    """
    refs = [JobRef(job) if isinstance(job, str) else JobRef(job.job_id, job.group, job.seq) for job in jobs]
    seen: set[str] = set()
    for ref in refs:
        if not isinstance(ref.job_id, str) or not ref.job_id:
            raise OutcomeQueryError(f"job_id {ref.job_id!r} is not allowed: pass each job's non-empty id")
        if ref.job_id in seen:
            raise OutcomeQueryError(
                f"job {ref.job_id!r} is asked for twice: each job is waited for once. Fix: pass each once."
            )
        seen.add(ref.job_id)
        if state_mode and not ref.group:
            raise OutcomeQueryError(
                f"job {ref.job_id!r}: state mode finds a job in its group's state item, so the group is "
                "required. Fix: pass JobRef(job_id, group=..., seq=...) (or the JobMessage sent)."
            )
    return refs


@dataclass
class BatchPoll:
    """One many-job wait's reads: what the next request holds, and what its answer means.

    Parameters
    ----------
    claim_table, group_table:
        The queue's tables (claim mode has a claim table).
    states:
        State mode's decoder of state items and headers.
    sent:
        The caller sent the jobs: nothing found reads ``pending``.
    """

    claim_table: str | None
    group_table: str | None
    states: GroupStateReader | None
    sent: bool
    #: Where the next poll starts in the list of items to read (they are read in turn past 100).
    _turn: int = 0
    #: Park headers read, by group (``None``: read, none), kept while a job of the group is waited for.
    _headers: dict[str, ParkHeader | None] = field(default_factory=dict)
    #: State items read, by group (``None``: read, none).
    _states: dict[str, GroupState | None] = field(default_factory=dict)
    #: Claims read, by job id (``None``: read, none).
    _claims: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    #: Epoch ms a lease is compared with (:meth:`at`, before each :meth:`outcome`).
    _now_ms: int = 0

    def request(self, waiting: Iterable[JobRef]) -> dict[str, Any]:
        """The ``RequestItems`` of the next poll's ``BatchGetItem`` for the jobs still waited for."""
        waiting = list(waiting)
        items = self._wanted(waiting)
        if len(items) > MAX_ITEMS_PER_POLL:
            start = self._turn % len(items)
            items = (items[start:] + items[:start])[:MAX_ITEMS_PER_POLL]
            self._turn = start + MAX_ITEMS_PER_POLL
        request: dict[str, Any] = {}
        for table, key in items:
            request.setdefault(table, {"Keys": [], "ConsistentRead": True})["Keys"].append(key)
        return request

    def read(self, request: Mapping[str, Any], response: Mapping[str, Any]) -> None:
        """Take in a ``BatchGetItem`` answer to ``request`` (keys left unprocessed stay unread)."""
        unprocessed = response.get("UnprocessedKeys", {}) or {}
        left = {
            self._ident(table, key) for table, keys in unprocessed.items() for key in keys.get("Keys", [])
        }
        found = {
            self._ident(table, item): item
            for table, items in (response.get("Responses", {}) or {}).items()
            for item in items
        }
        for table, keys in request.items():
            for key in keys["Keys"]:
                ident = self._ident(table, key)
                if ident not in left:
                    self._take(ident, found.get(ident))

    def outcome(self, job: JobRef) -> JobOutcome | None:
        """The job's outcome from what was read (``None``: nothing read of it yet)."""
        if self.claim_table is not None:
            if job.job_id not in self._claims:
                return None
            item = self._claims[job.job_id]
            group = str(item.get(ATTR_GROUP) or job.group or "") if item is not None else (job.group or "")
            header = self._headers.get(group) if group else None
            return claim_outcome(
                job.job_id, item, header, group=job.group, now_ms=self._now_ms, sent=self.sent
            )
        group = job.group or ""
        if group not in self._states or group not in self._headers:
            return None
        seen = job_sighting(group, job.job_id, self._states[group], self._headers[group], seq=job.seq)
        return state_outcome(seen, sent=self.sent)

    def needs_header(self, job: JobRef) -> bool:
        """Whether the job is dead by its claim and its group's header was not read yet (claim mode)."""
        item = self._claims.get(job.job_id)
        if self.group_table is None or item is None or not is_dead_claim(item):
            return False
        return str(item.get(ATTR_GROUP) or job.group or "") not in self._headers

    def forget(self, job: JobRef) -> None:
        """Drop what was read of a job given back (its group's items stay while others wait on them)."""
        self._claims.pop(job.job_id, None)

    def at(self, now_ms: int) -> BatchPoll:
        """Set the time a lease's end is compared with; return self."""
        self._now_ms = now_ms
        return self

    # --- the items ----------------------------------------------------------------------------------

    def _wanted(self, waiting: list[JobRef]) -> list[tuple[str, dict[str, Any]]]:
        """The items a poll wants, most needed first: headers of dead claims, claims, other headers."""
        if self.claim_table is None:
            assert self.group_table is not None  # state mode has a group table
            groups = list(dict.fromkeys(job.group or "" for job in waiting))
            return [
                (self.group_table, _group_key(group, sort_key))
                for group in groups
                for sort_key in (STATE_SK, SK_PARK)
            ]
        table = self.claim_table
        dead_groups = [self._group_of(job) for job in waiting if self.needs_header(job)]
        claims = [(table, {ATTR_ID: {"S": job.job_id}}) for job in waiting if not self.needs_header(job)]
        items: list[tuple[str, dict[str, Any]]] = []
        if self.group_table is not None:
            items += [(self.group_table, _group_key(group, SK_PARK)) for group in dict.fromkeys(dead_groups)]
        items += claims
        if self.group_table is not None:
            room = MAX_ITEMS_PER_POLL - len(items)
            others = [
                g for g in dict.fromkeys(job.group for job in waiting if job.group) if g not in dead_groups
            ]
            items += [(self.group_table, _group_key(group, SK_PARK)) for group in others[: max(room, 0)]]
        return items

    def _ident(self, table: str, key: Mapping[str, Any]) -> tuple[str, ...]:
        """An item's identity by its key (or the item): ``(job_id,)`` for a claim, ``(group, sk)`` for
        an item of the group table."""
        if table == self.claim_table:
            return (str(key[ATTR_ID]["S"]),)
        return (str(key[GROUP_ATTR_GROUP]["S"]), str(key[GROUP_ATTR_SK]["S"]))

    def _group_of(self, job: JobRef) -> str:
        item = self._claims.get(job.job_id) or {}
        return str(item.get(ATTR_GROUP) or job.group or "")

    def _take(self, ident: tuple[str, ...], item: Mapping[str, Any] | None) -> None:
        if len(ident) == 1:  # a claim
            self._claims[ident[0]] = None if item is None else decode_claim(dict(item))
            return
        group, sort_key = ident
        if sort_key == SK_PARK:
            self._headers[group] = None if item is None else self._decode_header(group, dict(item))
        else:
            self._states[group] = None if item is None else self._decode_state(dict(item))

    def _decode_header(self, group: str, item: dict[str, Any]) -> ParkHeader:
        return decode_header(item) if self.states is None else self.states.decode_header(group, item)

    def _decode_state(self, item: dict[str, Any]) -> GroupState:
        assert self.states is not None  # state mode
        return self.states.decode(item)


def _group_key(group: str, sort_key: str) -> dict[str, Any]:
    return {GROUP_ATTR_GROUP: {"S": group}, GROUP_ATTR_SK: {"S": sort_key}}


class ManyWait:
    """One many-job wait, driven poll by poll: :meth:`poll` reads once and gives back what ended,
    :meth:`next_pause` says how long to pause before the next (the sync and asyncio drivers pause
    their own way).

    Parameters
    ----------
    refs:
        The jobs, in their order.
    batch:
        The plan and the decoder of the reads.
    read:
        Makes one ``BatchGetItem``: ``read(request_items, jobs_waited_for)`` returns its answer.
    deadline:
        ``monotonic()`` time past which the rest are given back as they are.
    pauses:
        The first and the longest pause.
    """

    def __init__(
        self,
        refs: list[JobRef],
        batch: BatchPoll,
        read: Callable[[dict[str, Any], int], Mapping[str, Any]],
        *,
        deadline: float,
        pauses: tuple[float, float],
        stop_at_parked: bool,
        monotonic: Callable[[], float],
        clock: Callable[[], float],
    ) -> None:
        self.refs = refs
        self.finished = not refs
        self._waiting = list(refs)
        self._batch = batch
        self._read = read
        self._deadline = deadline
        self._pause, self._max_pause = pauses
        self._stop_at_parked = stop_at_parked
        self._monotonic = monotonic
        self._clock = clock

    def poll(self) -> list[JobOutcome]:
        """Read once (one request); the jobs that ended, and at the deadline all the rest, in order."""
        if self.finished:
            return []
        request = self._batch.request(self._waiting)
        self._batch.read(request, self._read(request, len(self._waiting)))
        self._batch.at(int(self._clock() * 1000))
        ended: list[JobOutcome] = []
        still: list[JobRef] = []
        for ref in self._waiting:
            outcome = self._batch.outcome(ref)
            done = outcome is not None and ends_wait(outcome.status, stop_at_parked=self._stop_at_parked)
            if outcome is not None and done and not self._batch.needs_header(ref):  # dead: parked at it?
                self._batch.forget(ref)
                ended.append(outcome)
            else:
                still.append(ref)
        self._waiting = still
        if still and self._deadline - self._monotonic() <= 0:
            ended += [self._batch.outcome(ref) or self._unread(ref) for ref in still]
            self._waiting = []
        self.finished = not self._waiting
        return ended

    def next_pause(self) -> float:
        """The pause before the next poll (doubling up to the longest, cut at the deadline)."""
        pause = max(0.0, min(self._pause, self._deadline - self._monotonic()))
        self._pause = min(self._pause * 2, self._max_pause)
        return pause

    def in_order(self, outcomes: Iterable[JobOutcome]) -> dict[str, JobOutcome]:
        """``outcomes`` by job id, in the order the jobs were given."""
        got = {outcome.job_id: outcome for outcome in outcomes}
        return {ref.job_id: got[ref.job_id] for ref in self.refs}

    def _unread(self, ref: JobRef) -> JobOutcome:
        status = JobStatus.PENDING if self._batch.sent else JobStatus.UNKNOWN
        return JobOutcome(ref.job_id, status, group=ref.group, detail="not read before the timeout")
