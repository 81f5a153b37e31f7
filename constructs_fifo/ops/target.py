"""The queue an operations command works on: the deployed resources, the clients, the mode, the stores.

Built from a :class:`~constructs_fifo.stacks.deployed.DeployedQueue` (what ``--stack``/``--queue`` resolve
to), so every command reads the same names ``deploy --queue`` prints. The stores are the public APIs
the runbook names (:class:`~constructs_fifo.client.ParkedGroups`,
:class:`~constructs_fifo.runtime.claim.store.ClaimStore`,
:class:`~constructs_fifo.client.state_reader.GroupStateReader`), never a second reading of the tables.

The mode is read from what the function's environment names: a claim table means claim mode; a
group table and no claim table, state mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.client.parked import ParkedGroups
from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.ops.errors import OperationError
from constructs_fifo.ops.plan import command as suggest
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.state.storage.store import StateStore

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.stacks.aws import AwsTarget
    from constructs_fifo.stacks.deployed import DeployedQueue

__all__ = ["CLAIM_MODE", "STATE_MODE", "OpsQueue"]

CLAIM_MODE: Final = "claim"
STATE_MODE: Final = "state"


@dataclass
class OpsQueue:
    """One deployed ``OrderedAgentQueue`` and the clients to operate it.

    Parameters
    ----------
    deployed
        What ``--stack``/``--queue`` resolved to.
    sqs, dynamodb, cloudwatch
        boto3 clients (tests inject moto-backed ones).
    clock
        Epoch seconds (lease checks, "age" columns).
    """

    deployed: DeployedQueue
    sqs: SQSClient
    dynamodb: DynamoDBClient
    cloudwatch: Any = None  # a CloudWatch client (no stubs in the dev extra)
    clock: Callable[[], float] = time.time
    cloudformation: Any = None  # finds the stack's pipes (status: the staging queues feeding the queue)
    pipes: Any = None

    @classmethod
    def connect(cls, deployed: DeployedQueue, target: AwsTarget) -> OpsQueue:
        """An :class:`OpsQueue` with the target's clients."""
        return cls(
            deployed,
            sqs=target.client("sqs"),
            dynamodb=target.client("dynamodb"),
            cloudwatch=target.client("cloudwatch"),
            cloudformation=target.client("cloudformation"),
            pipes=target.client("pipes"),
        )

    # --- what the queue is ---------------------------------------------------------------------------

    @property
    def label(self) -> str:
        return self.deployed.label

    @property
    def mode(self) -> str:
        """``claim`` or ``state``."""
        return CLAIM_MODE if self.deployed.claim_table else STATE_MODE

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    @property
    def dead_letter_queue_url(self) -> str:
        """The queue's DLQ.

        Raises
        ------
        OperationError
            The queue has no redrive policy (not an OrderedAgentQueue as the construct builds it).
        """
        if not self.deployed.dead_letter_queue_url:
            raise OperationError(
                f"queue {self.deployed.queue_name!r} has no dead-letter queue (no RedrivePolicy); "
                "the dlq commands need one",
                "point --stack/--queue at an OrderedAgentQueue (it always has a FIFO dead-letter queue)",
            )
        return self.deployed.dead_letter_queue_url

    @property
    def dead_letter_queue_arn(self) -> str:
        """The DLQ's ARN (StartMessageMoveTask's source)."""
        self.dead_letter_queue_url  # noqa: B018 - raises the explained error without a DLQ
        return str(self.deployed.dead_letter_queue_arn)

    # --- the stores ----------------------------------------------------------------------------------

    def require_claim_mode(self, command: str, *, job: str) -> ClaimStore:
        """The claim store; in state mode an :class:`OperationError` saying what to use instead (``job``:
        the job the command was asked about, named in the fix)."""
        table = self.deployed.claim_table
        if not table:
            raise OperationError(
                f"`{command}` reads the claim table, and queue {self.label!r} runs in state mode (no claim "
                "table: a job's outcome is in its group's state item)",
                f"use {suggest('dlq', 'show', job)} for a dead job, or `state show`/`groups show` of its "
                f"group (e.g. {suggest('groups', 'list')} lists them) for a state-mode queue",
            )
        return ClaimStore(table, self.dynamodb, clock=self.clock)

    def require_state_mode(self, command: str, *, group: str) -> StateStore:
        """The state store; in claim mode an :class:`OperationError` (``group``: the group asked about)."""
        table = self.deployed.group_table
        if self.mode != STATE_MODE or not table:
            raise OperationError(
                f"`{command}` reads a group's state item, and queue {self.label!r} runs in claim mode "
                "(no state: each job has a claim)",
                f"use {suggest('groups', 'show', group)} (and `claims show` of a job it names) for a "
                "claim-mode queue",
            )
        return StateStore(table, self.dynamodb, clock=self.clock)

    @property
    def claims(self) -> ClaimStore | None:
        """The claim store in claim mode, else ``None``."""
        table = self.deployed.claim_table
        return ClaimStore(table, self.dynamodb, clock=self.clock) if table else None

    @property
    def states(self) -> StateStore | None:
        """The state store in state mode, else ``None``."""
        table = self.deployed.group_table
        return (
            StateStore(table, self.dynamodb, clock=self.clock) if table and self.mode == STATE_MODE else None
        )

    @property
    def state_reader(self) -> GroupStateReader | None:
        table = self.deployed.group_table
        return GroupStateReader(table, self.dynamodb) if table and self.mode == STATE_MODE else None

    @property
    def parked(self) -> ParkedGroups | None:
        """The parked-group operator (``None`` without a group table: the CONTINUE policy in claim mode)."""
        table = self.deployed.group_table
        if not table or not self.deployed.dead_letter_queue_url:
            return None
        return ParkedGroups(
            group_table=table,
            claim_table=self.deployed.claim_table,
            queue_url=self.deployed.queue_url,
            dead_letter_queue_url=self.deployed.dead_letter_queue_url,
            dynamodb=self.dynamodb,
            sqs=self.sqs,
            clock=self.clock,
        )
