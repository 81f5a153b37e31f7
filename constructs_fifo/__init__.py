"""constructs-fifo: ordered, exactly-once-effect job queues on SQS FIFO, Lambda and DynamoDB.

The CDK side (:class:`OrderedAgentQueue`) is imported lazily, so that ``import constructs_fifo`` and
the Lambda runtime (:mod:`constructs_fifo.runtime`), which ships inside the function's asset, never
load ``aws_cdk``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.construct import OrderedAgentQueue

__all__ = ["OrderedAgentQueue", "__version__"]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "OrderedAgentQueue":
        # Lazy on purpose: the runtime ships this file into Lambda, where aws_cdk is absent.
        from constructs_fifo.construct import OrderedAgentQueue  # noqa: PLC0415

        return OrderedAgentQueue
    raise AttributeError(f"module 'constructs_fifo' has no attribute {name!r}")
