"""The queue's validation refusing a plain EventBridge rule target on its FIFO queue.

A rule's SQS FIFO target takes one static ``MessageGroupId`` (CloudFormation ``SqsParameters``; a
dynamic value is an open request, cloudformation-coverage-roadmap #2298): every event through it lands
in one group, so every entity waits behind every other one and one failing job stops them all. The
queue refuses such a target at synth and names the fix, :class:`EventBusIngress`, which reads the group
from each event.

Read at synth (``node.add_validation``), once the tree is complete: every ``AWS::Events::Rule`` of the
app whose targets name the queue's ARN. A rule in another stack names the queue by an import, which
is not compared (the service then refuses a FIFO target without a group, or takes the static one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsii
from aws_cdk import Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IValidation

__all__ = ["StaticGroupRuleTargets"]


@jsii.implements(IValidation)
class StaticGroupRuleTargets:
    """Refuse every EventBridge rule target on ``queue`` (a static group at best), naming the fix.

    Parameters
    ----------
    owner
        The :class:`~constructs_fifo.construct.OrderedAgentQueue` (for the message).
    queue
        Its FIFO queue.
    """

    def __init__(self, owner: Construct, queue: sqs.IQueue) -> None:
        self._owner = owner
        self._queue = queue

    def validate(self) -> list[str]:
        """One error per rule target on the queue (none when no rule targets it)."""
        stack = Stack.of(self._queue)
        queue_arn = stack.resolve(self._queue.queue_arn)
        errors: list[str] = []
        for rule in self._owner.node.root.node.find_all():
            if not isinstance(rule, events.CfnRule) or Stack.of(rule) is not stack:
                continue
            for target in stack.resolve(rule.targets) or []:
                if not isinstance(target, Mapping) or _get(target, "arn") != queue_arn:
                    continue
                group = _get(_get(target, "sqsParameters") or {}, "messageGroupId")
                errors.append(
                    f"{rule.node.path} targets the FIFO queue of {self._owner.node.path} with the "
                    f"static MessageGroupId {group!r}: a rule's SQS target takes one group for every "
                    "event, so every entity runs in one lane, one job at a time, and one failing job "
                    "stops them all. Fix: EventBusIngress(scope, id, queue=..., event_bus=..., "
                    "event_pattern=..., group_path='$.detail.<entity id>') from constructs_fifo, which "
                    "stages the events and pipes them in with each event's own group."
                )
        return errors


def _get(mapping: Mapping[str, Any], name: str) -> Any:
    """``mapping[name]`` in CDK's camelCase or CloudFormation's PascalCase (an L1 user writes either)."""
    if not isinstance(mapping, Mapping):
        return None
    return mapping.get(name, mapping.get(name[0].upper() + name[1:]))
