"""The CDK side of constructs-fifo: :class:`OrderedAgentQueue` and its errors.

The construct (``ordered_agent_queue.py``) assembles its parts, each in a room: ``settings/`` (defaults,
limits, props read at synth), ``code/`` (the function's asset), ``checks/`` (the props checked at once),
``resources/`` (queues, tables, the function or the container workers, permissions), ``observability/``
(alarms, dashboard); the ways in, each a construct of its own, are in ``ingress/`` (an EventBridge bus
through a pipe, a Custom Event Bus's FIFO subscriber, an SNS FIFO topic).

Never imported by the Lambda runtime (the function's asset does not even contain this package).
"""

from __future__ import annotations

from constructs_fifo.construct.checks.validation import (
    WARNING_RESERVED_CONCURRENCY_ONE,
    WARNING_VISIBILITY_TIMEOUT,
)
from constructs_fifo.construct.code.bundling import CodeBundling
from constructs_fifo.construct.errors import ConstructsFifoError, DependencyBundlingError, InvalidPropsError
from constructs_fifo.construct.ingress.custom_bus import CustomBusIngress
from constructs_fifo.construct.ingress.errors import InvalidIngressPropsError
from constructs_fifo.construct.ingress.event_bus import EventBusIngress
from constructs_fifo.construct.ingress.sns_topic import SnsFifoIngress
from constructs_fifo.construct.ingress.staging import WARNING_INGRESS_KEY_POLICY
from constructs_fifo.construct.ordered_agent_queue import OrderedAgentQueue
from constructs_fifo.construct.resources.containers import ContainerConsumer, FargateCapacity
from constructs_fifo.construct.resources.lambda_consumer import ProvisionedPollers
from constructs_fifo.construct.resources.permissions import WARNING_LOG_KEY_POLICY
from constructs_fifo.construct.resources.shared_storage import SharedStorage
from constructs_fifo.construct.settings.pace import Pace

__all__ = [
    "WARNING_INGRESS_KEY_POLICY",
    "WARNING_LOG_KEY_POLICY",
    "WARNING_RESERVED_CONCURRENCY_ONE",
    "WARNING_VISIBILITY_TIMEOUT",
    "CodeBundling",
    "ConstructsFifoError",
    "ContainerConsumer",
    "CustomBusIngress",
    "DependencyBundlingError",
    "EventBusIngress",
    "FargateCapacity",
    "InvalidIngressPropsError",
    "InvalidPropsError",
    "OrderedAgentQueue",
    "Pace",
    "ProvisionedPollers",
    "SharedStorage",
    "SnsFifoIngress",
]
