"""``grant_client``: let a function or a container be a sender of the queue, and tell it where the queue is.

A base of :class:`~constructs_fifo.construct.OrderedAgentQueue`. ``queue.grant_client(fn)`` grants what
a sender's :class:`~constructs_fifo.client.QueueClient` does (send jobs, read their outcomes, wait for
many) and nothing else, and sets the queue's address in ``fn``'s environment, so
``QueueClient.from_environment()`` in ``fn`` needs no name copied by hand:

* ``sqs:SendMessage`` on the queue (:data:`~.permissions.ENQUEUE_ACTIONS`, with the key's
  ``kms:GenerateDataKey``/``kms:Decrypt``);
* ``dynamodb:GetItem`` and ``dynamodb:BatchGetItem`` on the claim table and the group table
  (:data:`READ_OUTCOME_ACTIONS`, with the key's ``kms:Decrypt``): outcomes, park headers, states.

Operating parked groups (resume) is an operator's act: it is not granted here.

The variables are the runtime's own (``CONSTRUCTS_FIFO_QUEUE_URL`` ...) or, with ``name``, the same
names with the name after the prefix (:func:`constructs_fifo.runtime.settings.addresses.client_variables`).
"""

from __future__ import annotations

from typing import Final, Protocol, runtime_checkable

from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs

from constructs_fifo.construct.errors import InvalidPropsError
from constructs_fifo.construct.payloads import bucket as payloads
from constructs_fifo.construct.resources.permissions import grant_enqueue, grant_read_state
from constructs_fifo.runtime.settings.addresses import CLIENT_NAME_RULE, client_variables, is_client_name
from constructs_fifo.runtime.settings.choices import JobMode

__all__ = ["READ_OUTCOME_ACTIONS", "READ_OUTCOME_KEY_ACTIONS", "ClientAccess"]

#: What a sender reads of the tables: one item (``get``, ``wait``) or many a poll (``wait_many``).
READ_OUTCOME_ACTIONS: Final = ("dynamodb:GetItem", "dynamodb:BatchGetItem")
#: What reading an encrypted table needs of its key.
READ_OUTCOME_KEY_ACTIONS: Final = ("kms:Decrypt",)


@runtime_checkable
class _HasEnvironment(Protocol):
    """A Lambda function or an ECS container definition: both take environment variables."""

    def add_environment(self, key: str, value: str) -> object: ...  # pragma: no cover - a protocol


class ClientAccess:
    """``grant_client`` (see the module docstring); the queue sets the attributes it reads."""

    queue: sqs.Queue
    dead_letter_queue: sqs.Queue
    claim_table: dynamodb.Table | None
    group_table: dynamodb.Table | None
    encryption_key: kms.IKey | None
    mode: JobMode
    #: The bucket of bodies and results too large for SQS and the claim (``large_payloads=True``).
    payload_bucket: s3.Bucket | None

    def grant_client(
        self,
        sender: iam.IGrantable | ecs.ContainerDefinition,
        *,
        name: str | None = None,
        set_environment: bool = True,
    ) -> iam.Grant:
        """Let ``sender`` send jobs and read their outcomes, and set the queue's address in its environment.

        Parameters
        ----------
        sender
            A Lambda function, an ECS container definition (its task role is granted), or any grantee
            (a role: no environment to set).
        name
            Set the variables under this name (``CONSTRUCTS_FIFO_<NAME>_QUEUE_URL`` ...), for a sender of
            several queues; ``QueueClient.from_environment(name)`` reads them. Default: the runtime's
            own names.
        set_environment
            Set the variables (when ``sender`` takes environment variables).

        Raises
        ------
        InvalidPropsError
            ``name`` is not a letter followed by letters, digits and underscores.
        """
        if name is not None and not is_client_name(name):
            raise InvalidPropsError([f"grant_client(name={name!r}): the name must be {CLIENT_NAME_RULE}."])
        grantee = sender.task_definition.task_role if isinstance(sender, ecs.ContainerDefinition) else sender
        grant = grant_enqueue(grantee, queue=self.queue, encryption_key=self.encryption_key)
        for table in (self.claim_table, self.group_table):
            if table is not None:
                grant = grant.combine(
                    iam.Grant.add_to_principal_or_resource(
                        grantee=grantee,
                        actions=list(READ_OUTCOME_ACTIONS),
                        resource_arns=[table.table_arn],
                        resource=table,
                    )
                )
        if self.encryption_key is not None:
            grant = grant.combine(self.encryption_key.grant(grantee, *READ_OUTCOME_KEY_ACTIONS))
        if self.payload_bucket is not None:  # large bodies sent, large results read
            actions = (*payloads.SEND_PAYLOAD_ACTIONS, *payloads.READ_PAYLOAD_ACTIONS)
            grant = grant.combine(
                payloads.grant_payloads(grantee, self.payload_bucket, actions, self.encryption_key)
            )
        if set_environment and isinstance(sender, _HasEnvironment):
            values = {
                "queue_url": self.queue.queue_url,
                "dead_letter_queue_url": self.dead_letter_queue.queue_url,
                "claim_table": None if self.claim_table is None else self.claim_table.table_name,
                "group_table": None if self.group_table is None else self.group_table.table_name,
                "payload_bucket": None if self.payload_bucket is None else self.payload_bucket.bucket_name,
            }
            for field, variable in client_variables(name).items():
                value = values[field]
                if value is not None:
                    sender.add_environment(variable, value)
        return grant

    @property
    def state_table(self) -> dynamodb.Table | None:
        """State mode: the table holding each group's state (the group table); ``None`` in claim mode."""
        return self.group_table if self.mode is JobMode.STATE else None

    def grant_read_state(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` read group states (``constructs_fifo.client.GroupStateReader``).

        Grants ``dynamodb:GetItem`` on the state table and nothing else (plus ``kms:Decrypt`` on the
        key, when there is one). State mode only.

        Raises
        ------
        InvalidPropsError
            The queue is in claim mode: it has no states to read.
        """
        table = self.state_table
        if table is None:
            raise InvalidPropsError(
                [
                    f"grant_read_state() needs mode=JobMode.STATE; this queue is in mode={self.mode.value} "
                    "and keeps no group states: read your own store, or build the queue in state mode."
                ]
            )
        return grant_read_state(grantee, table=table, encryption_key=self.encryption_key)
