"""The account events example's stack: an EventBridge bus into a state-mode queue, converging by ``seq``.

- ``AccountEventBus`` (``AccountEvents``, a bus of its own, so the rule sees only these events);
- ``Accounts``, an ``OrderedAgentQueue`` in state mode on the Lambda consumer: each account is a
  message group whose state (the ledger, ``jobs/ledger.py``) lives in the queue's state table;
- ``Ingress``, an ``EventBusIngress``: a rule matching ``source: example.accounts``, a standard staging
  queue, and an EventBridge Pipe into the FIFO queue that reads the group (``$.detail.accountId``), the
  job id and deduplication id (``$.detail.eventId``: stable per account and version, so a producer's
  retry of one event is one job), the job type (``$.detail-type``) and ``seq`` (``$.detail.version``).

Imports only aws_cdk and constructs_fifo; makes no AWS call at synth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from aws_cdk import CfnOutput, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from constructs_fifo import EventBusIngress, JobMode, OrderedAgentQueue

__all__ = [
    "EVENT_BUS_NAME",
    "EVENT_SOURCE",
    "GROUP_PATH",
    "HANDLER",
    "JOBS_DIR",
    "JOB_ID_PATH",
    "OUTPUT_EVENT_BUS",
    "QUEUE_ID",
    "SEQ_PATH",
    "STACK_NAME",
    "AccountEventsStack",
]

JOBS_DIR: Final = Path(__file__).resolve().parent / "jobs"
STACK_NAME: Final = "AccountEvents"
QUEUE_ID: Final = "Accounts"
HANDLER: Final = "ledger.apply_event"
EVENT_BUS_NAME: Final = "AccountEvents"
EVENT_SOURCE: Final = "example.accounts"
GROUP_PATH: Final = "$.detail.accountId"
SEQ_PATH: Final = "$.detail.version"
JOB_ID_PATH: Final = "$.detail.eventId"
JOB_TYPE_PATH: Final = "$.detail-type"
OUTPUT_EVENT_BUS: Final = "EventBusName"


class AccountEventsStack(Stack):
    """The bus, the accounts queue (state mode) and the ingress between them."""

    def __init__(self, scope: Construct, id: str, *, event_bus_name: str = EVENT_BUS_NAME) -> None:
        super().__init__(scope, id, description="constructs-fifo example: ordered account events")
        self.accounts = OrderedAgentQueue(
            self,
            QUEUE_ID,
            code=lambda_.Code.from_asset(str(JOBS_DIR)),
            handler=HANDLER,
            mode=JobMode.STATE,
            table_removal_policy=RemovalPolicy.DESTROY,  # an example: `cdk destroy` leaves no table
        )
        self.bus = events.EventBus(self, "AccountEventBus", event_bus_name=event_bus_name)
        self.ingress = EventBusIngress(
            self,
            "Ingress",
            queue=self.accounts,
            event_bus=self.bus,
            event_pattern=events.EventPattern(source=[EVENT_SOURCE]),
            group_path=GROUP_PATH,
            seq_path=SEQ_PATH,
            job_id_path=JOB_ID_PATH,
            job_type_path=JOB_TYPE_PATH,
        )
        CfnOutput(self, OUTPUT_EVENT_BUS, value=self.bus.event_bus_name)
