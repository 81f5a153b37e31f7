"""Figure 7's baseline stack holds the resources of one sample queue, and synth time is measured."""

from __future__ import annotations

from collections import Counter
from typing import Any

from aws_cdk import App
from aws_cdk.assertions import Template

from benchmarks.handwritten_stack import HandWrittenStack
from benchmarks.synth_time import measure_synth, one_queue_stack

from .stacks import Synthesized


def _types(template: Template) -> Counter[str]:
    return Counter(resource["Type"] for resource in template.to_json()["Resources"].values())


def test_the_hand_written_stack_has_the_resources_of_one_sample_queue_type_for_type(
    synthesized: Synthesized,
) -> None:
    # GIVEN the sample stack's claim-mode queue with the table its job writes, and the hand-written stack
    sample = _types(synthesized.templates["AgentJobs/Notifications"])
    sample["AWS::DynamoDB::Table"] += 1  # the notification table, outside the construct
    # WHEN the hand-written stack is synthesized
    handwritten = _types(Template.from_stack(HandWrittenStack(App(), "HandWritten")))
    # THEN both hold the same resources: tables, queues, queue policies, function, role, alarms ...
    assert +handwritten == +sample
    assert handwritten["AWS::CloudWatch::Alarm"] == 5
    assert handwritten["AWS::Lambda::EventSourceMapping"] == 1


def _function(template: Template) -> dict[str, Any]:
    ((function,),) = [list(template.find_resources("AWS::Lambda::Function").values())]
    properties: dict[str, Any] = function["Properties"]
    return properties


def test_the_hand_written_function_deploys_the_same_asset_with_the_same_settings() -> None:
    # GIVEN figure 7's two stacks
    ours = Template.from_stack(one_queue_stack(App()))
    handwritten = Template.from_stack(HandWrittenStack(App(), "HandWritten"))
    # WHEN comparing their functions
    mine, theirs = _function(ours), _function(handwritten)
    # THEN the asset (job code + runtime) is the same files, the entry point and environment the same
    assert mine["Code"]["S3Key"] == theirs["Code"]["S3Key"]
    for setting in (
        "Handler",
        "Runtime",
        "Timeout",
        "MemorySize",
        "ReservedConcurrentExecutions",
        "Description",
    ):
        assert mine[setting] == theirs[setting], setting
    assert sorted(mine["Environment"]["Variables"]) == sorted(theirs["Environment"]["Variables"])
    assert sorted(ours.to_json()["Outputs"]) == sorted(handwritten.to_json()["Outputs"])


def test_synth_time_is_measured_for_both_sides_after_the_warm_up() -> None:
    # GIVEN / WHEN one timed run per side, after one warm-up
    result = measure_synth(1, warmups=1)
    # THEN each side has one timing (values are not asserted: no figure is a timed test)
    assert len(result.sample) == len(result.handwritten) == 1
