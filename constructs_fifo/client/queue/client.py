"""One client object for one queue: send, wait, read states and parked groups, found by name.

:class:`QueueClient` holds a queue's address (:class:`~constructs_fifo.client.queue.addresses.QueueAddress`)
and builds the client classes on it, sharing one SQS and one DynamoDB client: the producer
(:attr:`QueueClient.producer`), the outcomes (:attr:`QueueClient.outcomes`), the state reader (state
mode, :attr:`QueueClient.states`), the parked groups (:attr:`QueueClient.parked`) and the steering
controls (:attr:`QueueClient.steering`, docs/steering.md). Its own methods are the ones a sender calls:
``send``, ``send_batch``, ``send_and_wait``, ``get``, ``wait``, ``as_settled``, ``wait_many``, the
steering ``cancel``, ``cancel_group``, ``hold``, ``release``, ``send_superseding``, and their ``async`` forms
(:mod:`constructs_fifo.client.aio`).

Three ways to build one, none copying a name by hand::

    queue = QueueClient.from_stack("McpTools", "FastTools")   # the stack outputs (DescribeStacks)
    queue = QueueClient.from_environment()                     # in a function or container given
                                                               # queue.grant_client(fn) in the app
    queue = QueueClient(queue_url=..., claim_table=..., group_table=...)   # the address itself

``from_stack`` needs ``cloudformation:DescribeStacks`` on the stack; the rest, what each method reads
or writes (``grant_client`` grants a sender's: send, and read the outcomes; the steering methods need
``grant_steer`` as well).
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from constructs_fifo.client.environment import default_client, environment_errors
from constructs_fifo.client.errors import OutcomeQueryError, QueueLookupError
from constructs_fifo.client.outcomes import JobOutcomes
from constructs_fifo.client.parked import ParkedGroups
from constructs_fifo.client.producer import JobMessage, JobProducer
from constructs_fifo.client.queue.addresses import QueueAddress, from_environment, from_outputs
from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.client.steering import JobSteering
from constructs_fifo.client.waits import aio
from constructs_fifo.runtime.constants import DEFAULT_CLAIM_TTL_SECONDS

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_cloudformation.client import CloudFormationClient
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.client.job_status import JobOutcome
    from constructs_fifo.client.results import SendResult
    from constructs_fifo.client.steering import CancelReport, GroupCancelReport, HoldReport
    from constructs_fifo.client.waits.many import JobRefLike

__all__ = ["QueueClient"]


class QueueClient:
    """A client for one ``OrderedAgentQueue``: its producer, outcomes, states and parked groups.

    Parameters
    ----------
    address:
        Where the queue's parts are; or give ``queue_url`` (and the tables) instead.
    queue_url, claim_table, group_table, dead_letter_queue_url:
        The address, when ``address`` is not given (the construct's outputs of those names).
    payload_bucket:
        The queue's payload bucket (``large_payloads=True``), when ``address`` is not given.
    sqs, dynamodb, s3:
        boto3 clients; by default ones in ``AWS_REGION`` or boto3's region, shared by every part (the S3
        one made only for a large body or result).
    claim_ttl_seconds:
        Claim mode: the queue's ``claim_ttl``, the lifetime of the CANCELLED claim :meth:`cancel` writes
        for a job not started yet (:class:`~constructs_fifo.client.steering.JobSteering`).
    clock, monotonic, sleep:
        Injectable for tests (the outcomes', parked groups' and steering's clock, the waits' timer and
        pause).

    Raises
    ------
    OutcomeQueryError
        Neither ``address`` nor ``queue_url``, or both.
    """

    def __init__(
        self,
        address: QueueAddress | None = None,
        *,
        queue_url: str | None = None,
        claim_table: str | None = None,
        group_table: str | None = None,
        dead_letter_queue_url: str | None = None,
        payload_bucket: str | None = None,
        sqs: SQSClient | None = None,
        dynamodb: DynamoDBClient | None = None,
        s3: Any | None = None,
        claim_ttl_seconds: int = DEFAULT_CLAIM_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if (address is None) == (queue_url is None):
            raise OutcomeQueryError(
                "QueueClient needs the queue's address once: address=QueueAddress(...) or queue_url=... "
                "(with claim_table / group_table). Fix: pass one, or use QueueClient.from_stack(stack, "
                "queue) or QueueClient.from_environment()."
            )
        self.address = address or QueueAddress(
            str(queue_url),
            claim_table=claim_table or None,
            group_table=group_table or None,
            dead_letter_queue_url=dead_letter_queue_url or None,
            payload_bucket=payload_bucket or None,
        )
        self._s3 = s3
        self._sqs = sqs
        self._dynamodb = dynamodb
        self._claim_ttl_seconds = claim_ttl_seconds
        self._clock, self._monotonic, self._sleep = clock, monotonic, sleep

    @classmethod
    def from_stack(
        cls,
        stack: str,
        queue: str | None = None,
        *,
        cloudformation: CloudFormationClient | None = None,
        **options: Any,
    ) -> QueueClient:
        """The client of ``queue`` (construct path, its last part, or queue name) in deployed ``stack``.

        One ``DescribeStacks`` reads the outputs the construct writes (a stack with one queue needs no
        ``queue``). ``options`` are the constructor's (clients, clock).

        Raises
        ------
        QueueLookupError
            No such stack, or no such queue in it (the message lists those there).
        ProducerEnvironmentError
            No region, credentials or endpoint.
        """
        if cloudformation is None:
            cloudformation = default_client(
                "cloudformation", "QueueClient.from_stack", argument="cloudformation"
            )
        try:
            with environment_errors(f"stack {stack!r} was not read"):
                stacks = cloudformation.describe_stacks(StackName=stack)["Stacks"]
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code, message = error.get("Code", "Unknown"), error.get("Message", "")
            raise QueueLookupError(
                f"stack {stack!r} could not be read: {code}: {message}. "
                "Fix: check the stack's name and the region (AWS_REGION), and that the caller may call "
                "cloudformation:DescribeStacks on it."
            ) from exc
        outputs = [dict(output) for found in stacks for output in found.get("Outputs", [])]
        return cls(from_outputs(stack, outputs, queue), **options)

    @classmethod
    def from_environment(
        cls, name: str | None = None, *, environ: Mapping[str, str] | None = None, **options: Any
    ) -> QueueClient:
        """The client of the queue whose address ``queue.grant_client(fn, name=name)`` set.

        Raises
        ------
        QueueLookupError
            The variables are not set (the message names them and the fix).
        """
        return cls(from_environment(os.environ if environ is None else environ, name), **options)

    # --- the parts ----------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """``"claim"`` (the queue has a claim table) or ``"state"``."""
        return "claim" if self.address.claim_table else "state"

    @cached_property
    def producer(self) -> JobProducer:
        """The queue's producer, reading outcomes for ``send_and_wait`` when the queue has tables."""
        outcomes = self.outcomes if self.address.claim_table or self.address.group_table else None
        return JobProducer(
            self.address.queue_url,
            sqs_client=self._sqs_client,
            outcomes=outcomes,
            payload_bucket=self.address.payload_bucket,
            s3_client=self._s3,
        )

    @cached_property
    def outcomes(self) -> JobOutcomes:
        """The queue's outcomes (:class:`JobOutcomes`).

        Raises
        ------
        OutcomeQueryError
            The address names no table.
        """
        return JobOutcomes(
            claim_table=self.address.claim_table,
            group_table=self.address.group_table,
            dynamodb=self._dynamodb_client,
            clock=self._clock,
            monotonic=self._monotonic,
            sleep=self._sleep,
            s3=self._s3,
        )

    @cached_property
    def states(self) -> GroupStateReader:
        """State mode: the group states' reader.

        Raises
        ------
        OutcomeQueryError
            The queue is in claim mode (no states).
        """
        if self.mode != "state" or not self.address.group_table:
            raise OutcomeQueryError(
                f"the queue at {self.address.queue_url} is in claim mode and keeps no group states. Fix: "
                "read the outcomes (QueueClient.outcomes), or use a state-mode queue."
            )
        return GroupStateReader(self.address.group_table, self._dynamodb_client)

    @cached_property
    def parked(self) -> ParkedGroups:
        """The queue's parked groups (PARK policy).

        Raises
        ------
        OutcomeQueryError
            The address has no group table or no dead-letter queue.
        """
        if not self.address.group_table or not self.address.dead_letter_queue_url:
            raise OutcomeQueryError(
                f"the queue at {self.address.queue_url} has no group table or dead-letter queue in its "
                "address: parked groups need both. Fix: build the client from_stack, or pass them."
            )
        return ParkedGroups(
            group_table=self.address.group_table,
            claim_table=self.address.claim_table,
            queue_url=self.address.queue_url,
            dead_letter_queue_url=self.address.dead_letter_queue_url,
            dynamodb=self._dynamodb_client,
            sqs=self._sqs_client,
            clock=self._clock,
        )

    @cached_property
    def steering(self) -> JobSteering:
        """The queue's steering controls (:class:`JobSteering`, docs/steering.md), on the same clients
        and tables. The caller needs the construct's ``grant_steer``.

        Raises
        ------
        SteeringQueryError
            The address names no table.
        """
        return JobSteering(
            claim_table=self.address.claim_table,
            group_table=self.address.group_table,
            dynamodb=self._dynamodb_client,
            claim_ttl_seconds=self._claim_ttl_seconds,
            clock=self._clock,
            sqs=self._sqs_client,
            queue_url=self.address.queue_url,
        )

    @cached_property
    def _sqs_client(self) -> SQSClient:
        client: SQSClient = self._sqs or default_client("sqs", "QueueClient", argument="sqs")
        return client

    @cached_property
    def _dynamodb_client(self) -> DynamoDBClient:
        client: DynamoDBClient = self._dynamodb or default_client(
            "dynamodb", "QueueClient", argument="dynamodb"
        )
        return client

    # --- sending and waiting --------------------------------------------------------------------------

    def send(self, job_id: str, job_type: str, payload: Any, *, group: str, **options: Any) -> SendResult:
        """:meth:`JobProducer.send` (``options``: ``deduplication_id``, ``seq``)."""
        return self.producer.send(job_id, job_type, payload, group=group, **options)

    def send_batch(self, jobs: Sequence[JobMessage]) -> list[SendResult]:
        """:meth:`JobProducer.send_batch`."""
        return self.producer.send_batch(jobs)

    def send_and_wait(
        self, job_id: str, job_type: str, payload: Any, *, group: str, timeout_seconds: float, **options: Any
    ) -> JobOutcome:
        """:meth:`JobProducer.send_and_wait` (``options``: ``deduplication_id``, ``seq``,
        ``stop_at_parked``)."""
        return self.producer.send_and_wait(
            job_id, job_type, payload, group=group, timeout_seconds=timeout_seconds, **options
        )

    def get(self, job_id: str, group: str | None = None, **options: Any) -> JobOutcome:
        """:meth:`JobOutcomes.get` (``options``: ``seq``, ``sent``)."""
        return self.outcomes.get(job_id, group, **options)

    def wait(self, job_id: str, timeout_seconds: float, **options: Any) -> JobOutcome:
        """:meth:`JobOutcomes.wait` (``options``: ``group``, ``seq``, ``sent``, ``stop_at_parked``,
        the pauses)."""
        return self.outcomes.wait(job_id, timeout_seconds, **options)

    def as_settled(
        self, jobs: Iterable[str | JobRefLike], timeout_seconds: float, **options: Any
    ) -> Iterator[JobOutcome]:
        """:meth:`JobOutcomes.as_settled`: each job as it settles, one read request a poll."""
        return self.outcomes.as_settled(jobs, timeout_seconds, **options)

    def wait_many(
        self, jobs: Iterable[str | JobRefLike], timeout_seconds: float, **options: Any
    ) -> dict[str, JobOutcome]:
        """:meth:`JobOutcomes.wait_many`: every job's outcome, one read request a poll."""
        return self.outcomes.wait_many(jobs, timeout_seconds, **options)

    # --- steering (JobSteering: grant_steer) -------------------------------------------------------

    def cancel(self, job_id: str, **options: Any) -> CancelReport:
        """:meth:`JobSteering.cancel` (``options``: ``group`` (required in state mode), ``seq``,
        ``reason``, ``by``, ``dry_run``): a job not started never runs; its outcome is ``cancelled``."""
        return self.steering.cancel(job_id, **options)

    def cancel_group(self, group: str, **options: Any) -> GroupCancelReport:
        """:meth:`JobSteering.cancel_group` (``options``: ``reason``, ``by``, ``dry_run``, ``running``,
        ``up_to_seq``): every job of ``group`` sent before the call is cancelled (a live group's as they
        arrive, up to a marker sent through the group; a held or parked group's kept jobs at once)."""
        return self.steering.cancel_group(group, **options)

    def hold(self, group: str, **options: Any) -> HoldReport:
        """:meth:`JobSteering.hold` (``options``: ``reason``, ``by``, ``dry_run``): nothing of ``group``
        starts from its next batch on; its jobs are kept, in order (claim mode needs the PARK policy)."""
        return self.steering.hold(group, **options)

    def release(self, group: str, **options: Any) -> HoldReport:
        """:meth:`JobSteering.release` (``options``: ``dry_run``): a held group's kept jobs replay first,
        in order, then it is live again."""
        return self.steering.release(group, **options)

    def send_superseding(self, job: JobMessage, *, cancel_running: bool = False) -> SendResult:
        """:meth:`JobSteering.send_superseding` with the queue's producer: ``job`` (its ``supersede``
        key set) is sent so that the older jobs of its group and key not started (claim mode) or not
        applied (state mode) yet never run; ``cancel_running`` (claim mode): a started one is cancelled
        too."""
        return self.steering.send_superseding(self.producer, job, cancel_running=cancel_running)

    # --- asyncio (constructs_fifo.client.aio: boto3 in worker threads, the event loop never blocked) --

    async def send_async(
        self, job_id: str, job_type: str, payload: Any, *, group: str, **options: Any
    ) -> SendResult:
        """:meth:`send` without blocking the event loop (the request in a worker thread)."""
        return await aio.run_blocking(self.send, job_id, job_type, payload, group=group, **options)

    async def send_batch_async(self, jobs: Sequence[JobMessage]) -> list[SendResult]:
        """:meth:`send_batch` without blocking the event loop."""
        return await aio.run_blocking(self.send_batch, jobs)

    async def wait_async(self, job_id: str, timeout_seconds: float, **options: Any) -> JobOutcome:
        """:meth:`wait` in the event loop: each read in a worker thread, each pause ``asyncio.sleep``."""
        return await aio.wait(self.outcomes, job_id, timeout_seconds, **options)

    async def send_and_wait_async(
        self, job_id: str, job_type: str, payload: Any, *, group: str, timeout_seconds: float, **options: Any
    ) -> JobOutcome:
        """:meth:`send_and_wait` in the event loop (``options``: ``deduplication_id``, ``seq``,
        ``stop_at_parked``)."""
        stop_at_parked = bool(options.pop("stop_at_parked", False))
        await self.send_async(job_id, job_type, payload, group=group, **options)
        return await self.wait_async(
            job_id,
            timeout_seconds,
            group=group,
            seq=options.get("seq"),
            sent=True,
            stop_at_parked=stop_at_parked,
        )

    def as_settled_async(
        self, jobs: Iterable[str | JobRefLike], timeout_seconds: float, **options: Any
    ) -> AsyncIterator[JobOutcome]:
        """:meth:`as_settled` as an async iterator: each poll in a worker thread, each pause awaited."""
        return aio.as_settled(self.outcomes, jobs, timeout_seconds, **options)

    async def wait_many_async(
        self, jobs: Iterable[str | JobRefLike], timeout_seconds: float, **options: Any
    ) -> dict[str, JobOutcome]:
        """:meth:`wait_many` in the event loop."""
        return await aio.wait_many(self.outcomes, jobs, timeout_seconds, **options)

    async def cancel_async(self, job_id: str, **options: Any) -> CancelReport:
        """:meth:`cancel` without blocking the event loop (its requests in a worker thread)."""
        return await aio.run_blocking(self.cancel, job_id, **options)

    async def cancel_group_async(self, group: str, **options: Any) -> GroupCancelReport:
        """:meth:`cancel_group` without blocking the event loop (its requests in a worker thread)."""
        return await aio.run_blocking(self.cancel_group, group, **options)

    async def hold_async(self, group: str, **options: Any) -> HoldReport:
        """:meth:`hold` without blocking the event loop (its requests in a worker thread)."""
        return await aio.run_blocking(self.hold, group, **options)

    async def release_async(self, group: str, **options: Any) -> HoldReport:
        """:meth:`release` without blocking the event loop (its requests in a worker thread)."""
        return await aio.run_blocking(self.release, group, **options)

    async def send_superseding_async(self, job: JobMessage, *, cancel_running: bool = False) -> SendResult:
        """:meth:`send_superseding` without blocking the event loop (its requests in a worker thread)."""
        return await aio.run_blocking(self.send_superseding, job, cancel_running=cancel_running)
