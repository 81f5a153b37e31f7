"""constructs-fifo: ordered, exactly-once-effect job queues on SQS FIFO, Lambda and DynamoDB.

The CDK side (:class:`OrderedAgentQueue` and its ways in, :class:`EventBusIngress`,
:class:`CustomBusIngress`, :class:`SnsFifoIngress`) is imported lazily, so that ``import constructs_fifo`` and
the Lambda runtime (:mod:`constructs_fifo.runtime`), which ships inside the function's asset, never
load ``aws_cdk``. The construct's enums (:class:`JobMode`, :class:`DeadJobPolicy`, :class:`GapPolicy`,
:class:`OutcomeLines`) are the runtime's own (:mod:`constructs_fifo.runtime.settings.choices`),
standard library only.

Examples
--------
>>> from constructs_fifo import DeadJobPolicy, JobMode, OrderedAgentQueue  # doctest: +SKIP
>>> OrderedAgentQueue(stack, "Workspaces", code=code, handler="workspace.apply",  # doctest: +SKIP
...                   mode=JobMode.STATE, on_dead_job=DeadJobPolicy.PARK)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.settings.choices import DeadJobPolicy, GapPolicy, JobMode, OutcomeLines

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.construct import (
        CodeBundling,
        ContainerConsumer,
        CustomBusIngress,
        EventBusIngress,
        FargateCapacity,
        OrderedAgentQueue,
        Pace,
        ProvisionedPollers,
        SharedStorage,
        SnsFifoIngress,
    )

__all__ = [
    "CodeBundling",
    "ContainerConsumer",
    "CustomBusIngress",
    "DeadJobPolicy",
    "EventBusIngress",
    "FargateCapacity",
    "GapPolicy",
    "JobMode",
    "OrderedAgentQueue",
    "OutcomeLines",
    "Pace",
    "ProvisionedPollers",
    "SharedStorage",
    "SnsFifoIngress",
    "__version__",
]

__version__ = "0.1.0"

#: The CDK side's names, loaded on first use.
_CONSTRUCTS = frozenset(
    {
        "OrderedAgentQueue",
        "CodeBundling",
        "ContainerConsumer",
        "EventBusIngress",
        "CustomBusIngress",
        "SnsFifoIngress",
        "ProvisionedPollers",
        "Pace",
        "FargateCapacity",
        "SharedStorage",
    }
)


def __getattr__(name: str) -> Any:
    if name in _CONSTRUCTS:
        # Lazy on purpose: the runtime ships this file into Lambda, where aws_cdk is absent.
        import constructs_fifo.construct  # noqa: PLC0415

        return getattr(constructs_fifo.construct, name)
    raise AttributeError(f"module 'constructs_fifo' has no attribute {name!r}")
