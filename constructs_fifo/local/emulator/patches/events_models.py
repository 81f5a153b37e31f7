"""Fidelity patches of moto's EventBridge: a bus's ``Ref``, and what a rule's SQS target receives.

Two behaviours, one function each:

- :func:`_event_bus_physical_id`: ``Ref`` of an ``AWS::Events::EventBus`` is the bus's name. moto
  5.2.5 gave the bus no physical id, so ``Ref`` returned moto's object: a rule with
  ``EventBusName: {"Ref": bus}`` (what CDK synthesizes for ``events.Rule(event_bus=bus)``) failed the
  stack (``'EventBus' object has no attribute 'split'``), and DescribeStackResources listed the bus
  without a PhysicalResourceId.
- :func:`_send_to_targets`: an SQS target receives the event as AWS sends it. moto 5.2.5 sent an
  event without ``account``, ignored ``Input`` and ``InputPath`` (the target got the whole event).
  Targets other than SQS queues go through moto's own code unchanged.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from moto.core.utils import iso_8601_datetime_without_milliseconds, utcfromtimestamp
from moto.events.models import EventBus, Rule
from moto.events.utils import EventTemplateParser
from moto.utilities.arns import parse_arn

from constructs_fifo.local.emulator.patches.registry import original, replace

__all__ = ["patch"]

#: The fields of an event, in AWS's order (eb-events: "Amazon EventBridge events").
_EVENT_FIELDS = ("version", "id", "detail-type", "source", "account", "time", "region", "resources", "detail")


def _event_bus_physical_id(self: EventBus) -> str:
    # AWS: aws-resource-events-eventbus, "Ref returns the name of the event bus".
    return str(self.name)


def _aws_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event as EventBridge delivers it: its fields only, ``time`` as ISO 8601 (moto keeps epoch)."""
    delivered = {name: copy.deepcopy(event[name]) for name in _EVENT_FIELDS if name in event}
    if isinstance(delivered.get("time"), int | float):
        seconds = delivered["time"]
        delivered["time"] = iso_8601_datetime_without_milliseconds(utcfromtimestamp(seconds))
    return delivered


def _target_input(target: dict[str, Any], event: dict[str, Any]) -> str:
    """The message body: ``Input`` as given, ``InputPath``'s value, the transformed input, or the event.

    AWS: API_Target (Input: "Valid JSON text passed to the target"; InputPath: "the part of the
    matched event"; InputTransformer) and eb-transform-target-input. The transformer is moto's own
    (JSON templates only).
    """
    from constructs_fifo.local.pipes.paths import PathNotFoundError, resolve  # noqa: PLC0415

    delivered = _aws_event(event)
    if "Input" in target:
        return str(target["Input"])
    if "InputPath" in target:
        try:
            return json.dumps(resolve(target["InputPath"], delivered))
        except PathNotFoundError:
            return "null"
    if "InputTransformer" in target:
        transformer = target["InputTransformer"]
        transformed = EventTemplateParser.parse(
            input_template=transformer.get("InputTemplate"),
            input_paths_map=transformer.get("InputPathsMap", {}),
            event={**delivered, "ingestion-time": event.get("ingestion-time")},  # type: ignore[typeddict-item]
        )
        return json.dumps(transformed)
    return json.dumps(delivered)


def _send_to_targets(self: Rule, original_event: Any, transform_input: bool = True) -> None:
    # AWS: eb-targets (an SQS target receives the matched event, or what Input, InputPath or
    # InputTransformer makes of it); moto 5.2.5 built the event without "account" and ignored
    # Input and InputPath.
    from moto.sqs.models import sqs_backends  # noqa: PLC0415

    sqs_targets = [t for t in self.targets if parse_arn(t["Arn"]).service == "sqs"]
    others = copy.copy(self)
    others.targets = [t for t in self.targets if t not in sqs_targets]
    original(Rule, "send_to_targets")(others, original_event, transform_input)
    if not sqs_targets or not self.event_pattern.matches_event(original_event):
        return
    backend = sqs_backends[self.account_id][self.region_name]
    for target in sqs_targets:
        queue_name = parse_arn(target["Arn"]).resource_id
        group_id = target.get("SqsParameters", {}).get("MessageGroupId")
        if group_id and backend.get_queue(queue_name).attributes.get("ContentBasedDeduplication") != "true":
            # AWS: a FIFO target needs content-based deduplication (EventBridge sends no dedup id);
            # moto's own check, kept: the event is not delivered.
            continue
        if transform_input:
            body = _target_input(target, original_event)
        else:
            body = json.dumps(_aws_event(original_event))
        backend.send_message(queue_name=queue_name, message_body=body, group_id=group_id)


def patch() -> None:
    """Apply the EventBridge patches (the module docstring's two behaviours)."""
    replace(EventBus, "physical_resource_id", property(_event_bus_physical_id))
    replace(Rule, "send_to_targets", _send_to_targets)
