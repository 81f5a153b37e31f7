"""Learn one job's outcome by its id, and wait for it, without knowing the tables' layout.

A caller that queued a job (an MCP server answering a ``tools/call``, an agent waiting for
``run_tests`` before ``open_pr``) asks :class:`JobOutcomes` what became of it::

    outcomes = JobOutcomes(claim_table="MyStack-Claims1234", group_table="MyStack-Groups1234")
    outcome = outcomes.wait("job-17", timeout_seconds=30, group="ws#42")
    if outcome.status is JobStatus.SUCCEEDED:
        answer(outcome.result)

**Claim mode** (a ``claim_table``) reads the job's claim item, keyed by the job id: one consistent
``GetItem``; when there is no claim and ``group`` is given, the group's park header too. **State mode**
(no ``claim_table``) needs ``group``: the job is found in its group's state item (the applied ids,
the dead ones, the reorder buffer) and park header, two consistent ``GetItem`` calls; a job that
carries a ``seq`` is recognised by it (pass ``seq``).

What the statuses can tell apart, and what they cannot:

* ``succeeded``: claim mode, the SUCCEEDED claim with the job function's return value (``result``;
  ``None`` when it returned ``None`` or a value not stored, see
  :mod:`constructs_fifo.runtime.claim.result`); state mode, committed, with ``state_version`` a
  version of the state that includes it (the first version that did is not recorded).
* ``dead``: reason, error type and error; ``parked_group`` is set when its group is parked at it.
* ``parked``: no claim (or, state mode, not applied) while its group is parked at ``parked_behind``:
  it is kept, or still queued, behind that dead job until an operator resumes the group.
* ``running``: claim mode, an attempt holds a lease (``attempt``, ``lease_expires_at_ms``; a lease in
  the past means that attempt crashed and the next delivery retries it) or the last attempt failed
  and is retried (``error``); state mode, failed runs so far (``attempt`` is the next one).
* ``pending``: sent and not yet taken. Nothing in the tables records a send, so this is said only when
  the caller says it sent the job (``sent=True``: :meth:`JobProducer.send_and_wait` does), or, state
  mode, when the job waits in the reorder buffer for an earlier ``seq``, or its group is resuming.
* ``cancelled``: the job was cancelled (:class:`~constructs_fifo.client.steering.JobSteering`), with
  who and why; claim mode says whether an attempt was running then (``cancelled_while_running``: its
  result was not recorded, its effect may have happened). It never runs (again) and never reaches the
  dead-letter queue. State mode remembers a group's last 100 cancels.
* ``unknown``: nothing found. It cannot be told apart from a job never sent, one sent with another id
  or group, a claim expired by its TTL (``claim_ttl``), or (state mode) an applied job without ``seq``
  pushed out of the last ``remember_job_ids`` ids, or one with a ``seq`` asked about without it.

:meth:`JobOutcomes.wait` returns when the job is **settled** (``JobStatus.settled``: ``succeeded``
or ``dead``) or when the timeout passes, with the last status read. A job ``parked`` behind a dead one
is not settled: it has not run, and it runs when an operator resumes its group, so the wait goes on
(a caller that wants to stop there passes ``stop_at_parked=True``: the CLI's ``jobs show --wait``
does, for an operator). It polls fast first and backs off: 0.1 s doubling to 1 s
(``first_poll_seconds``, ``max_poll_seconds``). Each read is strongly consistent, so a SUCCEEDED
written before the read is seen. The cost of waiting, in read units (1 per 4 KB of a consistent
read): claim mode 1 per poll (a claim item is below 4 KB; a SUCCEEDED item with a result of N KB,
ceil((N + 1) / 4) once), 2 while there is no claim and ``group`` is given, 2 for a DEAD claim with a
group table (its group's park header says whether the group is parked at it); state mode 1 +
ceil(state item KB / 4). At the 1 s cap that is 1 read unit per second of waiting per job in claim
mode (docs/outcomes.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from constructs_fifo.client.environment import default_client, default_s3_client, environment_errors
from constructs_fifo.client.errors import OutcomeQueryError, OutcomeReadError
from constructs_fifo.client.job_status import (
    JobOutcome,
    JobStatus,
    claim_outcome,
    ends_wait,
    is_dead_claim,
    state_outcome,
)
from constructs_fifo.client.state_reader import GroupStateReader, StateReadError
from constructs_fifo.client.waits.many import BatchPoll, JobRefLike, ManyWait, job_refs
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import ATTR_GROUP
from constructs_fifo.runtime.dead_jobs.parking import ParkHeader, ParkStore
from constructs_fifo.runtime.payloads.pointer import MissingPayloadError, parse_pointer, read_object

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = [
    "DEFAULT_FIRST_POLL_SECONDS",
    "DEFAULT_MAX_POLL_SECONDS",
    "JobOutcome",
    "JobOutcomes",
    "JobStatus",
    "check_wait",
]

#: The first pause of :meth:`JobOutcomes.wait` between reads: a short job is seen done quickly.
DEFAULT_FIRST_POLL_SECONDS: Final = 0.1
#: The longest pause: the pause doubles up to it, so a long wait costs 1 read (claim mode) a second.
DEFAULT_MAX_POLL_SECONDS: Final = 1.0

_FIXES: Final = {
    "AccessDeniedException": "grant the caller dynamodb:GetItem (and BatchGetItem) on the table",
    "ResourceNotFoundException": "check the table name: the construct's claim_table / group_table",
}


class JobOutcomes:
    """Reads job outcomes from an ``OrderedAgentQueue``'s tables.

    Parameters
    ----------
    claim_table:
        Claim mode: the construct's ``claim_table`` name. Leave it out in state mode.
    group_table:
        The construct's ``group_table`` name: parked groups (claim mode, PARK policy) and, in state
        mode, the group states (required there).
    dynamodb:
        A boto3 DynamoDB client; by default one in ``AWS_REGION`` or boto3's region.
    s3:
        A boto3 S3 client for results over 64 KiB (``large_payloads``: the claim holds a pointer to the
        payload bucket, read back into the outcome's ``result``); by default made on the first one.
    clock, monotonic, sleep:
        Epoch seconds (a lease's end is compared with it), the timer of ``wait``'s timeout and its
        pause; injectable for tests.

    Raises
    ------
    OutcomeQueryError
        Neither table is given.
    """

    def __init__(
        self,
        *,
        claim_table: str | None = None,
        group_table: str | None = None,
        dynamodb: DynamoDBClient | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        s3: Any | None = None,
    ) -> None:
        if not claim_table and not group_table:
            raise OutcomeQueryError(
                "JobOutcomes needs the queue's tables: claim_table in claim mode (and group_table under "
                "the PARK policy), group_table in state mode. Fix: pass the construct's claim_table / "
                "group_table names (stack outputs, or `constructs-fifo describe`)."
            )
        if dynamodb is None:
            dynamodb = default_client("dynamodb", "JobOutcomes", argument="dynamodb")
        self.claim_table = claim_table or None
        self.group_table = group_table or None
        self._dynamodb = dynamodb
        self._claims = ClaimStore(claim_table, dynamodb, clock=clock) if claim_table else None
        self._parking = ParkStore(group_table, dynamodb, clock=clock) if group_table and claim_table else None
        self._states = GroupStateReader(group_table, dynamodb) if group_table and not claim_table else None
        self._clock = clock
        self._monotonic = monotonic
        self._sleep = sleep
        self._s3 = s3

    @property
    def mode(self) -> str:
        """``"claim"`` or ``"state"``."""
        return "claim" if self._claims is not None else "state"

    def get(
        self, job_id: str, group: str | None = None, *, seq: int | None = None, sent: bool = False
    ) -> JobOutcome:
        """Read the job's outcome now (consistent reads).

        Parameters
        ----------
        job_id:
            The job's id.
        group:
            Its group: required in state mode; in claim mode it tells a job without a claim parked
            (its group is) from pending or unknown.
        seq:
            State mode: the job's ``seq``, when it carries one.
        sent:
            The caller sent the job: nothing found reads ``pending``, not ``unknown``.

        Raises
        ------
        OutcomeQueryError
            State mode without ``group``, or an empty ``job_id``.
        OutcomeReadError
            A table could not be read.
        """
        if not isinstance(job_id, str) or not job_id:
            raise OutcomeQueryError(f"job_id {job_id!r} is not allowed: pass the job's non-empty id")
        if self._claims is not None:
            return self._resolved(self._claim_outcome(self._claims, job_id, group, sent=sent))
        if not group:
            raise OutcomeQueryError(
                f"job {job_id!r}: state mode finds a job in its group's state item, so the group is "
                "required. Fix: pass group= (the MessageGroupId it was sent with; --group on the CLI)."
            )
        return self._state_outcome(job_id, group, seq=seq, sent=sent)

    def wait(
        self,
        job_id: str,
        timeout_seconds: float,
        *,
        group: str | None = None,
        seq: int | None = None,
        sent: bool = False,
        stop_at_parked: bool = False,
        first_poll_seconds: float = DEFAULT_FIRST_POLL_SECONDS,
        max_poll_seconds: float = DEFAULT_MAX_POLL_SECONDS,
    ) -> JobOutcome:
        """Poll :meth:`get` until the job is settled or ``timeout_seconds`` passed; return the last read.

        Settled is ``succeeded`` or ``dead`` (``SETTLED_STATUSES``); ``stop_at_parked=True`` also
        returns at ``parked`` (the job waits behind a dead one for an operator), which a default wait
        goes on through. The pause starts at ``first_poll_seconds`` and doubles up to
        ``max_poll_seconds``; the last pause is cut so the last read is at the timeout. A timeout of 0
        reads once.

        Raises
        ------
        OutcomeQueryError
            A negative timeout, a pause not above 0, or :meth:`get`'s.
        OutcomeReadError
            A table could not be read.
        """
        check_wait(timeout_seconds, first_poll_seconds, max_poll_seconds)
        deadline = self._monotonic() + timeout_seconds
        pause = first_poll_seconds
        while True:
            outcome = self.get(job_id, group, seq=seq, sent=sent)
            left = deadline - self._monotonic()
            if ends_wait(outcome.status, stop_at_parked=stop_at_parked) or left <= 0:
                return outcome
            self._sleep(min(pause, left))
            pause = min(pause * 2, max_poll_seconds)

    # --- many jobs (constructs_fifo.client.waits.many: one BatchGetItem a poll) -----------------------------

    def as_settled(
        self,
        jobs: Iterable[str | JobRefLike],
        timeout_seconds: float,
        *,
        sent: bool = False,
        stop_at_parked: bool = False,
        first_poll_seconds: float = DEFAULT_FIRST_POLL_SECONDS,
        max_poll_seconds: float = DEFAULT_MAX_POLL_SECONDS,
    ) -> Iterator[JobOutcome]:
        """Wait for many jobs and give each back as it settles, like ``concurrent.futures.as_completed``.

        ``jobs`` are job ids (claim mode) or anything with ``job_id``, ``group`` and ``seq`` (a
        :class:`~constructs_fifo.client.waits.many.JobRef`, the ``JobMessage`` sent). Each poll is **one**
        ``BatchGetItem`` of at most 100 items, of the jobs not given back yet
        (:mod:`~constructs_fifo.client.waits.many` says which items and what a poll costs); the pauses are
        :meth:`wait`'s. When the timeout
        passes, the jobs not settled are given back last, in their order, with their last status (not
        settled: check ``outcome.status.settled``). Every job is given back exactly once.

        Raises
        ------
        OutcomeQueryError
            A bad timeout or pause, an empty or repeated job id, a state-mode job without its group.
        OutcomeReadError, ProducerEnvironmentError
            A read failed.
        """
        many = self.start_many(
            jobs,
            timeout_seconds,
            sent=sent,
            stop_at_parked=stop_at_parked,
            first_poll_seconds=first_poll_seconds,
            max_poll_seconds=max_poll_seconds,
        )
        return self._drive(many)

    def _resolved(self, outcome: JobOutcome) -> JobOutcome:
        """``outcome`` with a result the payload bucket holds read into ``result`` (one GetObject, only for
        a result over 64 KiB); a pointer whose object is gone leaves ``result_not_stored`` saying so."""
        pointer = parse_pointer(outcome.result_pointer)
        if pointer is None or outcome.result is not None:
            return outcome
        if self._s3 is None:
            self._s3 = default_s3_client()
        try:
            return replace(outcome, result=json.loads(read_object(self._s3, *pointer)))
        except MissingPayloadError as exc:
            return replace(
                outcome, result_not_stored=f"the return value was put in the payload bucket but {exc}"
            )

    def _drive(self, many: ManyWait) -> Iterator[JobOutcome]:
        while True:
            for outcome in many.poll():
                yield self._resolved(outcome)
            if many.finished:
                return
            self._sleep(many.next_pause())

    def wait_many(
        self,
        jobs: Iterable[str | JobRefLike],
        timeout_seconds: float,
        *,
        sent: bool = False,
        stop_at_parked: bool = False,
        first_poll_seconds: float = DEFAULT_FIRST_POLL_SECONDS,
        max_poll_seconds: float = DEFAULT_MAX_POLL_SECONDS,
    ) -> dict[str, JobOutcome]:
        """Wait for many jobs together (:meth:`as_settled`); return every outcome by job id, in their order.

        It returns when all settled or the timeout passed (then some are not settled).
        """
        many = self.start_many(
            jobs,
            timeout_seconds,
            sent=sent,
            stop_at_parked=stop_at_parked,
            first_poll_seconds=first_poll_seconds,
            max_poll_seconds=max_poll_seconds,
        )
        return many.in_order(list(self._drive(many)))

    def start_many(
        self,
        jobs: Iterable[str | JobRefLike],
        timeout_seconds: float,
        *,
        sent: bool = False,
        stop_at_parked: bool = False,
        first_poll_seconds: float = DEFAULT_FIRST_POLL_SECONDS,
        max_poll_seconds: float = DEFAULT_MAX_POLL_SECONDS,
    ) -> ManyWait:
        """A many-job wait to drive poll by poll (:meth:`as_settled` drives one; so does the asyncio form).

        Raises
        ------
        OutcomeQueryError
            As :meth:`as_settled`.
        """
        check_wait(timeout_seconds, first_poll_seconds, max_poll_seconds)
        refs = job_refs(jobs, state_mode=self._claims is None)
        return ManyWait(
            refs,
            BatchPoll(self.claim_table, self.group_table, self._states, sent),
            self._batch_read,
            deadline=self._monotonic() + timeout_seconds,
            pauses=(first_poll_seconds, max_poll_seconds),
            stop_at_parked=stop_at_parked,
            monotonic=self._monotonic,
            clock=self._clock,
        )

    def _batch_read(self, request: dict[str, Any], jobs: int) -> Mapping[str, Any]:
        tables = ", ".join(request)
        try:
            with environment_errors(f"the outcomes of {jobs} job(s) were not read from {tables}"):
                return self._dynamodb.batch_get_item(RequestItems=request)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", "Unknown"))
            fix = _FIXES.get(code, "retry; if it persists, check the tables and the caller's permissions")
            raise OutcomeReadError(
                f"reading the outcomes of {jobs} job(s) from {tables} failed: {code}: "
                f"{error.get('Message', '')}; {fix}"
            ) from exc

    # --- reads ------------------------------------------------------------------------------------

    def _claim_outcome(self, claims: ClaimStore, job_id: str, group: str | None, *, sent: bool) -> JobOutcome:
        item = self._read(claims.table_name, job_id, lambda: claims.get(job_id))
        header = None
        if item is None:
            header = self._header(group, job_id)
        elif is_dead_claim(item):
            header = self._header(str(item.get(ATTR_GROUP) or group or ""), job_id)
        return claim_outcome(job_id, item, header, group=group, now_ms=int(self._clock() * 1000), sent=sent)

    def _header(self, group: str | None, job_id: str) -> ParkHeader | None:
        parking = self._parking
        if parking is None or not group:
            return None
        header: ParkHeader | None = self._read(parking.table_name, job_id, lambda: parking.header(group))
        return header

    def _read(self, table: str, job_id: str, read: Callable[[], Any]) -> Any:
        try:
            with environment_errors(f"the outcome of job {job_id!r} was not read from table {table!r}"):
                return read()
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", "Unknown"))
            fix = _FIXES.get(code, "retry; if it persists, check the table and the caller's permissions")
            raise OutcomeReadError(
                f"reading the outcome of job {job_id!r} from table {table!r} failed: {code}: "
                f"{error.get('Message', '')}; {fix}"
            ) from exc

    def _state_outcome(self, job_id: str, group: str, *, seq: int | None, sent: bool) -> JobOutcome:
        states = self._states
        assert states is not None  # state mode: built with the group table
        try:
            seen = self._read(states.table_name, job_id, lambda: states.find_job(group, job_id, seq=seq))
        except StateReadError as exc:
            raise OutcomeReadError(f"job {job_id!r}: {exc}") from exc
        return state_outcome(seen, sent=sent)


def check_wait(timeout_seconds: float, first_poll_seconds: float, max_poll_seconds: float) -> None:
    """Refuse a wait's timeout and pauses that cannot be (every form of wait checks them here).

    Raises
    ------
    OutcomeQueryError
        A negative timeout, or not ``0 < first_poll_seconds <= max_poll_seconds``.
    """
    if timeout_seconds < 0 or not 0 < first_poll_seconds <= max_poll_seconds:
        raise OutcomeQueryError(
            f"wait(timeout_seconds={timeout_seconds!r}, first_poll_seconds={first_poll_seconds!r}, "
            f"max_poll_seconds={max_poll_seconds!r}): the timeout must be 0 or more and "
            "0 < first_poll_seconds <= max_poll_seconds. Fix: pass e.g. 30, 0.1 and 1."
        )
