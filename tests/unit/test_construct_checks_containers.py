"""The consumer's props (constructs_fifo/construct/checks/containers.py): what the container consumer
refuses, what it warns about, and the workers' props refused with the Lambda function."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Annotations, Match

from constructs_fifo import (
    ContainerConsumer,
    FargateCapacity,
    OrderedAgentQueue,
    ProvisionedPollers,
    SharedStorage,
)
from constructs_fifo.construct import InvalidPropsError
from constructs_fifo.construct.checks.containers import WARNING_SLOTS_BEYOND_GROUPS
from constructs_fifo.runtime import constants

REPO = Path(__file__).resolve().parents[2]
IMAGE = "public.ecr.aws/example/agent-worker:1"


def _consumer(**props: Any) -> ContainerConsumer:
    return ContainerConsumer(image=ecs.ContainerImage.from_registry(IMAGE), **props)


def _problems(**props: Any) -> list[str]:
    """Build a container queue with ``props`` (``consumer`` defaults to a plain one); its problems."""
    kwargs: dict[str, Any] = {"handler": "builds.run_tests", "consumer": _consumer(), **props}
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(Stack(App(), "S"), "Builds", **kwargs)
    return raised.value.problems


def test_a_container_queue_needs_no_code_and_no_docker() -> None:
    # GIVEN a container queue with an image reference and no code WHEN built THEN it is valid
    queue = OrderedAgentQueue(Stack(App(), "S"), "Builds", handler="builds.run_tests", consumer=_consumer())
    assert queue.workers is not None


@pytest.mark.parametrize(
    ("prop", "value", "instead"),
    [
        ("timeout", Duration.minutes(5), "max_job_duration"),
        ("memory_size", 1024, "cpu and memory_mib"),
        ("reserved_concurrency", 5, "max_tasks x slots"),
        ("max_concurrency", 5, "max_tasks x slots"),
        ("tracing", lambda_.Tracing.ACTIVE, "instrument the image"),
        ("provisioned_pollers", ProvisionedPollers(), "min_tasks keeps tasks ready"),
    ],
)
def test_each_lambda_only_prop_is_refused_with_the_container_consumer(
    prop: str, value: Any, instead: str
) -> None:
    # GIVEN a Lambda-only prop set on a container queue WHEN built
    problems = _problems(**{prop: value})
    # THEN the problem names the prop and what to use instead
    [problem] = [p for p in problems if p.startswith(f"{prop}=")]
    assert "does nothing with consumer=ContainerConsumer(...)" in problem and instead in problem


def test_a_lambda_only_prop_at_its_default_is_not_a_problem() -> None:
    # GIVEN the Lambda-only props passed at their defaults WHEN built THEN the queue is valid
    OrderedAgentQueue(
        Stack(App(), "S"),
        "Builds",
        handler="builds.run_tests",
        consumer=_consumer(),
        timeout=Duration.minutes(2),
        memory_size=256,
        reserved_concurrency=None,
    )


def test_max_job_duration_is_not_bounded_by_timeout_with_containers() -> None:
    # GIVEN a 3-hour bound of a run (past any function timeout) on a container queue WHEN built
    queue = OrderedAgentQueue(
        Stack(App(), "S"), "Builds", handler="b.run", consumer=_consumer(), max_job_duration=Duration.hours(3)
    )
    # THEN it is valid (the Lambda rule "<= timeout" does not apply)
    assert queue.workers is not None


def test_a_state_mode_queue_on_containers_is_refused_with_the_composition() -> None:
    # GIVEN mode=STATE with the container consumer WHEN built THEN the fix names claim mode feeding state mode
    [problem] = [p for p in _problems(mode=constants.JobMode.STATE) if p.startswith("mode=")]
    assert "claim-mode container queue whose job enqueues the transition to a state-mode queue" in problem


@pytest.mark.parametrize(("visibility", "heartbeat"), [(60, 30), (60, 45), (300, 150)])
def test_a_heartbeat_not_well_inside_the_visibility_timeout_is_refused(
    visibility: int, heartbeat: int
) -> None:
    # GIVEN heartbeat_interval >= visibility_timeout / 2 WHEN built
    problems = _problems(
        visibility_timeout=Duration.seconds(visibility), heartbeat_interval=Duration.seconds(heartbeat)
    )
    # THEN the problem names both and the largest interval that works
    [problem] = [p for p in problems if p.startswith("heartbeat_interval=")]
    assert f"visibility_timeout / 2 ({visibility}s / 2)" in problem
    assert f"pass heartbeat_interval < {visibility // 2}s" in problem


def test_a_heartbeat_inside_half_the_visibility_timeout_is_valid() -> None:
    # GIVEN a 29 s heartbeat for a 60 s visibility timeout WHEN built THEN it is valid
    OrderedAgentQueue(
        Stack(App(), "S"),
        "Builds",
        handler="b.run",
        consumer=_consumer(),
        visibility_timeout=Duration.seconds(60),
        heartbeat_interval=Duration.seconds(29),
    )


def test_more_in_flight_than_a_fifo_queue_holds_is_refused() -> None:
    # GIVEN 1000 tasks x 64 slots x 10 records WHEN built THEN the problem names FIFO's in-flight limit
    [problem] = [p for p in _problems(consumer=_consumer(max_tasks=1000), slots=64) if "in flight" in p]
    assert problem.startswith(
        "consumer.max_tasks=1000 x slots=64 x batch_size=10 = 640000 messages in flight"
    )
    assert "120000" in problem


@pytest.mark.parametrize(
    ("consumer", "start"),
    [
        ({"cpu": 1000}, "consumer.cpu=1000 is not a Fargate task size"),
        ({"cpu": 256, "memory_mib": 4096}, "consumer.memory_mib=4096 does not go with cpu=256"),
        (
            {"ephemeral_storage_gib": 500},
            "consumer.ephemeral_storage_gib=500 is outside Fargate's 21–200 GiB",
        ),
        ({"max_tasks": 0}, "consumer.max_tasks=0 is not a whole number >= 1"),
        ({"expected_groups": 0}, "consumer.expected_groups=0 is not a whole number >= 1"),
    ],
)
def test_a_task_size_or_scale_fargate_cannot_run_is_refused(consumer: dict[str, Any], start: str) -> None:
    # GIVEN a container consumer Fargate cannot size WHEN built THEN the problem names the field and its rule
    assert any(p.startswith(start) for p in _problems(consumer=_consumer(**consumer))), start


@pytest.mark.parametrize(
    ("consumer", "start", "fix"),
    [
        ({"min_tasks": 5}, "consumer.min_tasks=5 is not a whole number from 0 to max_tasks=4", "min_tasks=1"),
        ({"min_tasks": -1}, "consumer.min_tasks=-1 is not a whole number", "min_tasks=1"),
        ({"capacity": "SPOT"}, "consumer.capacity='SPOT' is not a FargateCapacity", "FargateCapacity()"),
        (
            {"capacity": FargateCapacity(spot_weight=0)},
            "consumer.capacity has spot_weight=0 and on_demand_weight=0",
            "spot_weight >= 1",
        ),
        (
            {"capacity": FargateCapacity(spot_weight=1001)},
            "consumer.capacity.spot_weight=1001 is not a whole number from 0 to 1000",
            "spot_weight=1",
        ),
        (
            {"capacity": FargateCapacity(on_demand_base=5)},
            "consumer.capacity.on_demand_base=5 is not a whole number from 0 to max_tasks=4",
            "base up to max_tasks",
        ),
        (
            {"shared_storage": SharedStorage(path="workspaces")},
            "consumer.shared_storage.path='workspaces' is not an absolute directory",
            "path='/mnt/shared'",
        ),
        (
            {"shared_storage": SharedStorage(path="/")},
            "consumer.shared_storage.path='/' is not an absolute directory other than '/'",
            "path='/mnt/shared'",
        ),
        (
            {"shared_storage": SharedStorage(uid=-1)},
            "consumer.shared_storage.uid=-1 is not a POSIX id",
            "uid=1000",
        ),
        (
            {"shared_storage": "/mnt/shared"},
            "consumer.shared_storage='/mnt/shared' is not a SharedStorage",
            "SharedStorage(path='/mnt/shared')",
        ),
    ],
)
def test_a_floor_capacity_or_shared_storage_that_cannot_work_is_refused(
    consumer: dict[str, Any], start: str, fix: str
) -> None:
    # GIVEN a container consumer with one wrong option WHEN built THEN its problem names it, the rule, the fix
    [problem] = [p for p in _problems(consumer=_consumer(**consumer)) if p.startswith(start)]
    assert fix in problem


def test_fargate_spot_with_arm64_tasks_is_refused_with_the_reason() -> None:
    # GIVEN Spot capacity for ARM64 tasks WHEN built THEN the problem says Spot runs x86_64 only, and the fix
    [problem] = _problems(
        consumer=_consumer(capacity=FargateCapacity()), architecture=lambda_.Architecture.ARM_64
    )
    assert problem.startswith("consumer.capacity.spot_weight=1 with architecture=ARM_64")
    assert "x86_64 Linux tasks only" in problem and "spot_weight=0" in problem


def test_every_wrong_option_of_one_consumer_is_collected() -> None:
    # GIVEN a floor above the ceiling, both weights 0 and a relative path WHEN built THEN all three are listed
    problems = _problems(
        consumer=_consumer(
            min_tasks=9, capacity=FargateCapacity(spot_weight=0), shared_storage=SharedStorage(path="x")
        )
    )
    assert [p.split(" ")[0] for p in problems] == [
        "consumer.min_tasks=9",
        "consumer.capacity",
        "consumer.shared_storage.path='x'",
    ]


def test_valid_floor_capacity_and_storage_build() -> None:
    # GIVEN every new option at a valid value (Spot alone, an on-demand floor is not needed) WHEN built
    queue = OrderedAgentQueue(
        Stack(App(), "S"),
        "Builds",
        handler="builds.run_tests",
        consumer=_consumer(min_tasks=4, capacity=FargateCapacity(), shared_storage=SharedStorage()),
    )
    # THEN the workers expose the mounted file system
    assert queue.workers is not None and queue.workers.shared_file_system is not None


def test_slots_the_expected_groups_cannot_fill_warn() -> None:
    # GIVEN 4 slots x 4 tasks for 6 expected groups WHEN built
    stack = Stack(App(), "S")
    OrderedAgentQueue(stack, "Builds", handler="b.run", consumer=_consumer(max_tasks=4, expected_groups=6))
    # THEN a warning says at most 6 slots run and scaling stops at 2 tasks
    warnings = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("expected_groups=6"))
    [warning] = [str(w.entry.data) for w in warnings]
    assert "scaling stops at 2 tasks" in warning and WARNING_SLOTS_BEYOND_GROUPS in warning


@pytest.mark.parametrize(("prop", "value"), [("slots", 4), ("heartbeat_interval", Duration.seconds(30))])
def test_the_workers_props_are_refused_with_the_lambda_function(prop: str, value: Any) -> None:
    # GIVEN a workers' prop on a Lambda queue WHEN built THEN the problem names it and the consumer prop
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(
            Stack(App(), "S"),
            "Jobs",
            code=lambda_.Code.from_asset(str(REPO / "lambda")),
            handler="notifier.handle",
            **{prop: value},
        )
    [problem] = raised.value.problems
    assert problem.startswith(f"{prop} is a setting of the container workers")
    assert "consumer=ContainerConsumer(image=...)" in problem


def test_the_lambda_function_still_needs_its_code() -> None:
    # GIVEN a Lambda queue without code WHEN built THEN the problem asks for code or a container consumer
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(Stack(App(), "S"), "Jobs", handler="notifier.handle")
    [problem] = raised.value.problems
    assert problem.startswith("code=None: the Lambda function needs the job code")


def test_a_code_directory_given_to_a_container_queue_is_checked_for_its_handler() -> None:
    # GIVEN the code directory of a local run and a handler it does not hold WHEN built
    problems = _problems(code=lambda_.Code.from_asset(str(REPO / "lambda")), handler="nowhere.handle")
    # THEN the handler check reads it as it does for the function
    assert any("nowhere" in p for p in problems), problems
