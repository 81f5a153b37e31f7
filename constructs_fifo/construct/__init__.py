"""The CDK side of constructs-fifo: :class:`OrderedAgentQueue` and its errors.

Never imported by the Lambda runtime (the function's asset does not even contain this package).
"""

from __future__ import annotations

from constructs_fifo.construct.bundling import CodeBundling
from constructs_fifo.construct.errors import ConstructsFifoError, DependencyBundlingError, InvalidPropsError
from constructs_fifo.construct.ordered_agent_queue import OrderedAgentQueue
from constructs_fifo.construct.permissions import WARNING_LOG_KEY_POLICY
from constructs_fifo.construct.validation import (
    WARNING_RESERVED_CONCURRENCY_ONE,
    WARNING_VISIBILITY_TIMEOUT,
)

__all__ = [
    "WARNING_LOG_KEY_POLICY",
    "WARNING_RESERVED_CONCURRENCY_ONE",
    "WARNING_VISIBILITY_TIMEOUT",
    "CodeBundling",
    "ConstructsFifoError",
    "DependencyBundlingError",
    "InvalidPropsError",
    "OrderedAgentQueue",
]
