"""OrderedAgentQueue validation: one test per rule pinning its message, one for collecting several."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

import pytest
from aws_cdk import App, BundlingOptions, CfnParameter, DockerImage, Duration, Environment, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Match, Template

from constructs_fifo import CodeBundling, ContainerConsumer, OrderedAgentQueue
from constructs_fifo.construct import ConstructsFifoError, InvalidPropsError
from constructs_fifo.construct.settings import defaults
from constructs_fifo.runtime import constants
from constructs_fifo.runtime.settings.spec import SECONDS, SETTINGS, Setting

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def code() -> lambda_.Code:
    return lambda_.Code.from_asset(str(REPO / "lambda"))


def _problems(code: lambda_.Code, **props: Any) -> list[str]:
    """Build the construct with ``props`` and return the problems it raised."""
    kwargs: dict[str, Any] = {"code": code, "handler": "notifier.handle", **props}
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(Stack(App(), "S"), "Jobs", **kwargs)
    return raised.value.problems


RULES: dict[str, tuple[dict[str, Any], str]] = {
    "batch_size_above_10": (
        {"batch_size": 11},
        "batch_size=11 is out of range: an SQS FIFO event source (and ReceiveMessage) takes at most 10 "
        "records per batch, so it must be between 1 and 10 inclusive; pass batch_size from 1 to 10.",
    ),
    "batch_size_below_1": (
        {"batch_size": 0},
        "batch_size=0 is out of range: an SQS FIFO event source (and ReceiveMessage) takes at most 10 "
        "records per batch, so it must be between 1 and 10 inclusive; pass batch_size from 1 to 10.",
    ),
    "max_receive_count_below_the_safety_net": (
        {"max_receive_count": 95},
        "max_receive_count=95 is less than 96, the least safe value for batch_size=10 and max_attempts=5: "
        "SQS counts a receive for every record returned while another job of its batch is retried or "
        "crashes the function, so healthy jobs could reach the dead-letter queue for another job's "
        "failures; pass max_receive_count >= 96 (the runtime decides when a job is dead; maxReceiveCount "
        "is only the safety net), or omit it for the default.",
    ),
    "max_receive_count_below_the_wake_up_refresh": (
        {"batch_size": 1, "max_attempts": 1, "max_receive_count": 5},
        "max_receive_count=5 is less than 6, the least safe value for batch_size=1 and max_attempts=1: "
        "SQS counts a receive for every record returned while another job of its batch is retried or "
        "crashes the function, so healthy jobs could reach the dead-letter queue for another job's "
        "failures; pass max_receive_count >= 6 (the runtime decides when a job is dead; maxReceiveCount "
        "is only the safety net), or omit it for the default.",
    ),
    "max_attempts_too_many_for_the_batch": (
        {"max_attempts": 60},
        "max_attempts=60 is too many for batch_size=10: the safety net would need max_receive_count >= "
        "1141, above SQS's 1000; pass max_attempts <= 52, or a smaller batch_size.",
    ),
    "max_receive_count_below_the_state_mode_safety_net": (
        {"mode": constants.JobMode.STATE, "max_receive_count": 133},
        "max_receive_count=133 is less than 134, the least safe value for batch_size=10 and max_attempts=5 "
        "in state mode: SQS counts a receive for every record returned while another job of its batch is "
        "retried or crashes the function, so healthy jobs could reach the dead-letter queue for another "
        "job's failures; pass max_receive_count >= 134 (the runtime decides when a job is dead; "
        "maxReceiveCount is only the safety net), or omit it for the default.",
    ),
    "max_attempts_too_many_for_the_batch_in_state_mode": (
        {"mode": constants.JobMode.STATE, "max_attempts": 51},
        "max_attempts=51 is too many for batch_size=10 in state mode: the safety net would need "
        "max_receive_count >= 1008, above SQS's 1000; pass max_attempts <= 50, or a smaller batch_size.",
    ),
    "max_receive_count_above_1000": (
        {"max_receive_count": 1001},
        "max_receive_count=1001 is more than 1000, the SQS maximum for a redrive policy; pass "
        "max_receive_count up to 1000, or omit it for the default.",
    ),
    "max_attempts_below_1": (
        {"max_attempts": 0, "max_receive_count": 100},
        "max_attempts=0 is out of range: the runtime counts a job's runs and declares it dead after "
        "max_attempts, so it must be between 1 and 100 inclusive; pass max_attempts from 1 to 100.",
    ),
    "max_attempts_above_100": (
        {"max_attempts": 101, "batch_size": 1},
        "max_attempts=101 is out of range: the runtime counts a job's runs and declares it dead after "
        "max_attempts, so it must be between 1 and 100 inclusive; pass max_attempts from 1 to 100.",
    ),
    "visibility_timeout_below_timeout": (
        {"visibility_timeout": Duration.seconds(60)},
        "visibility_timeout=60s is shorter than timeout=120s: Lambda rejects an SQS event source whose "
        "function timeout exceeds the queue's visibility timeout; pass visibility_timeout >= timeout "
        "(AWS recommends 6 x timeout = 720s), or omit it for that default.",
    ),
    "visibility_timeout_above_12_hours": (
        {"visibility_timeout": Duration.hours(13)},
        "visibility_timeout=46800s is longer than 12 hours, the SQS maximum; pass visibility_timeout <= "
        "Duration.hours(12).",
    ),
    "timeout_above_15_minutes": (
        {"timeout": Duration.minutes(16)},
        "timeout=960s is longer than 15 minutes, the Lambda maximum of a function timeout; pass "
        "timeout <= Duration.minutes(15).",
    ),
    "reserved_concurrency_below_1": (
        {"reserved_concurrency": 0},
        "reserved_concurrency=0 is less than 1: with 0 the function never runs and every message ends "
        "in the dead-letter queue; pass reserved_concurrency >= 1 (default 10).",
    ),
    "reserved_concurrency_below_max_concurrency": (
        {"reserved_concurrency": 5, "max_concurrency": 10},
        "reserved_concurrency=5 is less than max_concurrency=10: the event source would be throttled, "
        "and throttled receives push messages toward the dead-letter queue; pass reserved_concurrency "
        ">= 10 or lower max_concurrency.",
    ),
    "max_concurrency_below_2": (
        {"max_concurrency": 1},
        "max_concurrency=1 is out of range: Lambda's ScalingConfig.MaximumConcurrency is limited, so it "
        "must be between 2 and 1000 inclusive; pass max_concurrency from 2 to 1000.",
    ),
    "max_concurrency_above_1000": (
        {"max_concurrency": 1001, "reserved_concurrency": 2000},
        "max_concurrency=1001 is out of range: Lambda's ScalingConfig.MaximumConcurrency is limited, so "
        "it must be between 2 and 1000 inclusive; pass max_concurrency from 2 to 1000.",
    ),
    "claim_ttl_not_positive": (
        {"claim_ttl": Duration.seconds(0)},
        "claim_ttl=0s is shorter than 1 second: it must be positive and is used in whole seconds; pass "
        "a Duration of at least 1 second, e.g. Duration.days(7).",
    ),
    "age_alarm_threshold_not_positive": (
        {"age_alarm_threshold": Duration.seconds(0)},
        "age_alarm_threshold=0s is shorter than 1 second: it must be positive and is used in whole "
        "seconds; pass a Duration of at least 1 second, e.g. Duration.minutes(5).",
    ),
    "backoff_base_below_1_second": (
        {"backoff_base": Duration.millis(500)},
        "backoff_base=0.5s is shorter than 1 second: it must be positive and is used in whole seconds; "
        "pass a Duration of at least 1 second, e.g. Duration.seconds(2).",
    ),
    "backoff_base_above_12_hours": (
        {"backoff_base": Duration.hours(13)},
        "backoff_base=46800s is longer than 12 hours, the cap of every retry delay (the SQS maximum of a "
        "visibility timeout); pass backoff_base <= Duration.hours(12).",
    ),
    "memory_size_below_128": (
        {"memory_size": 64},
        "memory_size=64 is out of range: Lambda memory is given in MB and it must be between 128 and "
        "10240 inclusive; pass memory_size from 128 to 10240.",
    ),
    "memory_size_above_10240": (
        {"memory_size": 10241},
        "memory_size=10241 is out of range: Lambda memory is given in MB and it must be between 128 and "
        "10240 inclusive; pass memory_size from 128 to 10240.",
    ),
    "handler_without_function": (
        {"handler": "agent_worker"},
        "handler='agent_worker' is not 'module.function': it must be a module path of Python identifiers "
        "(dots allowed) and a function name, separated by a dot; pass e.g. handler='agent_worker.handle' "
        "for handle() in agent_worker.py at the root of code.",
    ),
    "handler_with_bad_identifier": (
        {"handler": "agent-worker.handle"},
        "handler='agent-worker.handle' is not 'module.function': it must be a module path of Python "
        "identifiers (dots allowed) and a function name, separated by a dot; pass e.g. "
        "handler='agent_worker.handle' for handle() in agent_worker.py at the root of code.",
    ),
    "outcome_lines_not_a_level": (
        {"outcome_lines": "EVERY"},
        "outcome_lines='EVERY' is not an OutcomeLines: it must be OutcomeLines.JOB or OutcomeLines.BATCH; "
        "pass e.g. outcome_lines=OutcomeLines.JOB.",
    ),
    "environment_collides_with_the_runtime": (
        {"environment": {"CONSTRUCTS_FIFO_CLAIM_TABLE": "mine"}},
        "environment['CONSTRUCTS_FIFO_CLAIM_TABLE'] is reserved: the construct sets it for its runtime "
        "(\"the claim table's name\"); remove 'CONSTRUCTS_FIFO_CLAIM_TABLE' from environment (use the "
        "matching prop instead).",
    ),
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_rule_raises_its_message(code: lambda_.Code, rule: str) -> None:
    # GIVEN props that break exactly one rule
    props, message = RULES[rule]
    # WHEN the construct is built
    problems = _problems(code, **props)
    # THEN exactly that problem is reported, with its pinned message
    assert problems == [message]


def test_all_problems_of_one_call_are_raised_together(code: lambda_.Code) -> None:
    # GIVEN three invalid props in one call
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(
            Stack(App(), "S"),
            "Jobs",
            code=code,
            handler="handle",
            batch_size=20,
            max_receive_count=0,
        )
    # THEN one ValueError lists all three, with a header counting them
    error = raised.value
    assert isinstance(error, ValueError)
    assert isinstance(error, ConstructsFifoError)
    assert [p.split(" ")[0] for p in error.problems] == [
        "handler='handle'",
        "batch_size=20",
        "max_receive_count=0",
    ]
    assert str(error).splitlines()[0] == "OrderedAgentQueue: 3 invalid prop(s):"
    assert str(error).splitlines()[1:] == [f"- {p}" for p in error.problems]


def test_invalid_props_create_no_resources(code: lambda_.Code) -> None:
    # GIVEN a stack
    stack = Stack(App(), "S")
    # WHEN the construct is rejected
    with pytest.raises(InvalidPropsError):
        OrderedAgentQueue(stack, "Jobs", code=code, handler="notifier.handle", batch_size=0)
    # THEN nothing but the (empty) construct scope was added
    jobs = stack.node.find_child("Jobs")
    assert jobs.node.children == []


def test_unresolved_tokens_are_not_validated(code: lambda_.Code) -> None:
    # GIVEN values known only at deploy time
    stack = Stack(App(), "S")
    batch = CfnParameter(stack, "Batch", type="Number").value_as_number
    memory = CfnParameter(stack, "Memory", type="Number").value_as_number
    handler = CfnParameter(stack, "Handler").value_as_string
    # WHEN the construct is built with them
    OrderedAgentQueue(
        stack, "Jobs", code=code, handler=handler, batch_size=cast(int, batch), memory_size=cast(int, memory)
    )
    # THEN it builds (no ValueError) and passes them through to the template
    template = Template.from_stack(stack)
    template.has_resource_properties("AWS::Lambda::EventSourceMapping", {"BatchSize": {"Ref": "Batch"}})
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "MemorySize": {"Ref": "Memory"},
            "Environment": {"Variables": Match.object_like({"CONSTRUCTS_FIFO_HANDLER": {"Ref": "Handler"}})},
        },
    )


def test_unresolved_timeout_needs_an_explicit_visibility_timeout(code: lambda_.Code) -> None:
    # GIVEN a timeout known only at deploy time and no visibility_timeout
    stack = Stack(App(), "S")
    seconds = CfnParameter(stack, "Timeout", type="Number").value_as_number
    # WHEN the construct is built
    problems = _problems(code, timeout=Duration.seconds(seconds))
    # THEN the default cannot be computed and the fix is named
    assert problems == [
        "visibility_timeout=None cannot default to 6 x timeout when timeout is an unresolved token; "
        "pass visibility_timeout explicitly."
    ]


def test_inline_code_is_rejected() -> None:
    # GIVEN inline code
    problems = _problems(lambda_.Code.from_inline("def handle(job, context): pass"))
    # THEN the message asks for a directory asset
    assert problems == [
        "code=InlineCode is not supported: the construct adds its runtime next to your handler, so code "
        "must be a local directory asset; pass code=lambda_.Code.from_asset('<directory holding your "
        "handler module>')."
    ]


def test_zip_file_asset_is_rejected(tmp_path: Path) -> None:
    # GIVEN an asset that is a zip file, not a directory
    archive = tmp_path / "code.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    # WHEN the construct is built
    problems = _problems(lambda_.Code.from_asset(str(archive)))
    # THEN the message names the path and asks for a directory
    assert problems == [
        f"code=Code.from_asset({str(archive)!r}) is not a directory: the construct adds its runtime next "
        "to your handler, so a zip file or missing path cannot be used; pass "
        "code=lambda_.Code.from_asset('<directory holding your handler module>')."
    ]


def test_asset_with_its_own_constructs_fifo_is_rejected(tmp_path: Path) -> None:
    # GIVEN a directory that already holds a top-level constructs_fifo
    (tmp_path / "constructs_fifo").mkdir()
    (tmp_path / "worker.py").write_text("def handle(job, context):\n    pass\n")
    # WHEN the construct is built
    problems = _problems(lambda_.Code.from_asset(str(tmp_path)), handler="worker.handle")
    # THEN the message says why and what to remove
    assert problems == [
        f"code=Code.from_asset({str(tmp_path)!r}) already holds a top-level 'constructs_fifo': the "
        "construct adds the installed runtime under that name and would shadow or be shadowed by it; "
        f"remove {tmp_path / 'constructs_fifo'} from the asset directory."
    ]


@pytest.mark.parametrize(("reserved", "expected"), [(1, None), (2, 2), (10, 10), (1000, 1000), (2000, 1000)])
def test_default_max_concurrency_follows_reserved_within_the_api_range(
    reserved: int, expected: int | None
) -> None:
    # GIVEN a reserved concurrency and no max_concurrency
    # WHEN the mapping's default MaximumConcurrency is derived
    # THEN it equals the reserved concurrency, within ScalingConfig's 2 to 1000 (none below 2)
    assert defaults.max_concurrency_for(reserved) == expected


def test_default_max_concurrency_without_reservation_is_the_default_reservation() -> None:
    # GIVEN no reservation (reserved_concurrency=None) and no max_concurrency
    # WHEN the default is derived THEN the mapping is capped at what the default reservation would give
    assert defaults.max_concurrency_for(None) == defaults.RESERVED_CONCURRENCY == 10


def test_default_max_concurrency_of_an_unresolved_reserved_concurrency_is_none() -> None:
    # GIVEN a reserved concurrency known only at deploy time
    reserved = CfnParameter(Stack(App(), "S"), "Reserved", type="Number").value_as_number
    # WHEN the default is derived THEN the mapping is left uncapped (no value to copy at synth time)
    assert defaults.max_concurrency_for(reserved) is None


@pytest.mark.parametrize("name", [n for n in constants.__all__ if n.startswith("ENV_")])
def test_every_variable_the_runtime_reads_is_reserved(code: lambda_.Code, name: str) -> None:
    # GIVEN a user environment setting one of the variables the construct writes for its runtime
    variable = getattr(constants, name)
    # WHEN the construct is built THEN it is rejected, not silently overwritten
    problems = _problems(code, environment={variable: "mine"})
    assert len(problems) == 1
    assert problems[0].startswith(f"environment[{variable!r}] is reserved: the construct sets it")


def test_state_mode_settings_in_claim_mode_are_refused_with_the_fix(code: lambda_.Code) -> None:
    # GIVEN a claim-mode queue given state-mode settings / WHEN built / THEN each is named with the fix
    from constructs_fifo.runtime.settings.choices import GapPolicy

    problems = _problems(code, reorder_limit=10, gap_policy=GapPolicy.SKIP_GAP)
    assert problems == [
        f"{name} is a state-mode setting and does nothing in mode=CLAIM: remove {name}, or pass "
        "mode=JobMode.STATE if the job function is a transition apply(job, state) -> state."
        for name in ("reorder_limit", "gap_policy")
    ]


def test_state_mode_reorder_limit_is_range_checked(code: lambda_.Code) -> None:
    from constructs_fifo.runtime.constants import JobMode

    assert _problems(code, mode=JobMode.STATE, reorder_limit=0) == [
        "reorder_limit=0 is out of range: the reorder buffer is committed with the group's state in one "
        "DynamoDB item, so it must be between 1 and 1000 inclusive; pass reorder_limit from 1 to 1000."
    ]


#: Number and duration props whose row has a limit of its own (the counts of ``layers`` and
#: ``security_groups`` are pinned with real objects below).
BOUNDED_PROPS = [
    row
    for row in SETTINGS.values()
    if row.prop is not None
    and (row.low is not None or row.high is not None)
    and not row.type.startswith("Sequence")
]


@pytest.mark.parametrize("row", BOUNDED_PROPS, ids=lambda row: row.name)
def test_the_construct_refuses_one_past_each_limit_of_a_props_row(code: lambda_.Code, row: Setting) -> None:
    # GIVEN a prop one past a limit of its row of the settings spec (the limits RuntimeConfig reads)
    mode = constants.JobMode.STATE if row.state_only else constants.JobMode.CLAIM
    # (a container workers' prop is given with the container consumer)
    image = ecs.ContainerImage.from_registry("agent-worker:1")
    consumer = {"consumer": ContainerConsumer(image=image)} if row.container_only else {}
    outside = ([row.low - 1] if row.low else []) + ([row.high + 1] if row.high is not None else [])
    assert outside, row.name
    for number in outside:
        value = Duration.seconds(number) if row.unit == SECONDS else number
        # WHEN building / THEN the problem names that prop with that value
        problems = _problems(code, mode=mode, **consumer, **{str(row.prop): value})
        shown = f"{number}s" if row.unit == SECONDS else str(number)
        assert any(problem.startswith(f"{row.prop}={shown} ") for problem in problems), problems


# --- placement and platform props: vpc, vpc_subnets, security_groups, architecture, tracing, layers ---


def _placement_problems(code: lambda_.Code, **props: Any) -> list[str]:
    """Build the construct in a stack holding a VPC (one public, one isolated subnet) with ``props``;
    a prop given as a function of the stack is called with it."""
    stack = Stack(App(), "S", env=Environment(account="111111111111", region="eu-west-1"))
    ec2.Vpc(
        stack,
        "Vpc",
        max_azs=1,
        nat_gateways=0,
        subnet_configuration=[
            ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC),
            ec2.SubnetConfiguration(name="isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
        ],
    )
    resolved = {k: v(stack) if callable(v) else v for k, v in props.items()}
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(stack, "Jobs", code=code, handler="notifier.handle", **resolved)
    return raised.value.problems


def _vpc(stack: Stack) -> ec2.IVpc:
    vpc = stack.node.find_child("Vpc")
    assert isinstance(vpc, ec2.Vpc)
    return vpc


def _groups(count: int) -> Any:
    def build(stack: Stack) -> list[ec2.ISecurityGroup]:
        return [
            ec2.SecurityGroup.from_security_group_id(stack, f"Sg{i}", f"sg-{i:08d}") for i in range(count)
        ]

    return build


PLACEMENT_RULES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "subnets_and_groups_without_a_vpc": (
        {
            "vpc_subnets": ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
            "security_groups": _groups(1),
        },
        [
            "vpc_subnets is given without vpc: it only places a function inside a VPC; pass vpc=..., or "
            "remove vpc_subnets.",
            "security_groups is given without vpc: it only places a function inside a VPC; pass vpc=..., "
            "or remove security_groups.",
        ],
    ),
    "public_subnets": (
        {"vpc": _vpc, "vpc_subnets": ec2.SubnetSelection(subnet_type=ec2.SubnetType.PUBLIC)},
        [
            "vpc_subnets selects public subnets: a Lambda function gets no public IP address, so from a "
            "public subnet it cannot reach SQS, DynamoDB or CloudWatch and no job runs; pass "
            "vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS) (or isolated "
            "subnets with SQS, DynamoDB and CloudWatch VPC endpoints)."
        ],
    ),
    "six_security_groups": (
        {"vpc": _vpc, "security_groups": _groups(6)},
        [
            "security_groups has 6 group(s): a Lambda function in a VPC takes 1 to 5 security groups; pass "
            "1 to 5, or omit security_groups for one the function creates (all outbound traffic allowed, "
            "no inbound)."
        ],
    ),
    "no_security_group": (
        {"vpc": _vpc, "security_groups": _groups(0)},
        [
            "security_groups has 0 group(s): a Lambda function in a VPC takes 1 to 5 security groups; pass "
            "1 to 5, or omit security_groups for one the function creates (all outbound traffic allowed, "
            "no inbound)."
        ],
    ),
    "custom_architecture": (
        {"architecture": lambda_.Architecture.custom("riscv64", "linux/riscv64")},
        [
            "architecture='riscv64' is not one Lambda runs: it must be x86_64 or arm64; pass "
            "architecture=lambda_.Architecture.X86_64 or lambda_.Architecture.ARM_64, or omit it for x86_64."
        ],
    ),
    "tracing_not_an_enum": (
        {"tracing": "Active"},
        [
            "tracing='Active' is not a lambda_.Tracing: pass lambda_.Tracing.ACTIVE, PASS_THROUGH or "
            "DISABLED, or omit it for no tracing configuration."
        ],
    ),
    "six_layers": (
        {
            "layers": lambda stack: [
                lambda_.LayerVersion.from_layer_version_arn(
                    stack, f"Layer{i}", f"arn:aws:lambda:eu-west-1:111111111111:layer:l{i}:1"
                )
                for i in range(6)
            ]
        },
        [
            "layers has 6 layers: a Lambda function takes at most 5; pass at most 5 (merge layers, or bundle "
            "the dependencies with the job code: a requirements.txt in its directory)."
        ],
    ),
    "layer_for_another_runtime": (
        {
            "layers": lambda stack: [
                lambda_.LayerVersion.from_layer_version_attributes(
                    stack,
                    "Old",
                    layer_version_arn="arn:aws:lambda:eu-west-1:111111111111:layer:old:1",
                    compatible_runtimes=[lambda_.Runtime.PYTHON_3_9],
                )
            ]
        },
        [
            "layers[0] (S/Old) is compatible with python3.9, not the function's python3.14; pass a layer "
            "built for python3.14 (compatible_runtimes including lambda_.Runtime.PYTHON_3_14), or remove it."
        ],
    ),
    "bundling_requirements_with_docker": (
        {
            "bundling": CodeBundling(
                requirements=["httpx==0.28.1"],
                docker=BundlingOptions(image=DockerImage.from_registry("python:3.14"), command=["true"]),
            )
        },
        [
            "bundling.requirements=['httpx==0.28.1'] does nothing with bundling.docker: Docker bundling "
            "installs what its own command installs; remove requirements, or remove docker to install them "
            "without Docker."
        ],
    ),
    "bundling_no_index_without_find_links": (
        {"bundling": CodeBundling(no_index=True)},
        [
            "bundling.no_index=True without find_links leaves the installer nowhere to find wheels: pass "
            "find_links=['<directory of wheels>'], or no_index=False."
        ],
    ),
}


@pytest.mark.parametrize("rule", sorted(PLACEMENT_RULES))
def test_each_placement_rule_raises_its_message(code: lambda_.Code, rule: str) -> None:
    # GIVEN placement or platform props that break one rule
    props, messages = PLACEMENT_RULES[rule]
    # WHEN the construct is built THEN exactly those problems are reported, with their pinned messages
    assert _placement_problems(code, **props) == messages


def test_a_row_bounded_by_another_prop_is_refused_above_it(code: lambda_.Code, monkeypatch: Any) -> None:
    # GIVEN a duration row that may not pass another prop (here: the age alarm may not pass the claim TTL)
    row = dataclasses.replace(
        SETTINGS["age_alarm_threshold"], not_above="claim_ttl", not_above_why="an example reason"
    )
    monkeypatch.setitem(cast(dict[str, Setting], SETTINGS), "age_alarm_threshold", row)
    # WHEN it is above that prop / THEN the problem names both values, the reason and the fix
    problems = _problems(code, claim_ttl=Duration.minutes(5), age_alarm_threshold=Duration.minutes(6))
    assert problems == [
        "age_alarm_threshold=360s is more than claim_ttl=300s: an example reason; pass age_alarm_threshold "
        "<= claim_ttl, raise claim_ttl, or omit age_alarm_threshold for the default."
    ]
    # AND at that prop's value it is allowed
    OrderedAgentQueue(
        Stack(App(), "S"),
        "Jobs",
        code=code,
        handler="notifier.handle",
        claim_ttl=Duration.minutes(5),
        age_alarm_threshold=Duration.minutes(5),
    )


def _function_variables(stack: Stack) -> dict[str, Any]:
    functions = Template.from_stack(stack).find_resources("AWS::Lambda::Function")
    (function,) = functions.values()
    variables: dict[str, Any] = function["Properties"]["Environment"]["Variables"]
    return variables


def test_max_job_duration_is_written_in_seconds_only_when_given(code: lambda_.Code) -> None:
    # GIVEN a queue without and one with a bound of a job's run
    plain, bounded = Stack(App(), "Plain"), Stack(App(), "Bounded")
    OrderedAgentQueue(plain, "Jobs", code=code, handler="notifier.handle")
    OrderedAgentQueue(
        bounded, "Jobs", code=code, handler="notifier.handle", max_job_duration=Duration.seconds(90)
    )
    # THEN only the second function's environment carries it, in seconds (the template is otherwise
    # unchanged: the consumer's own bound, the timeout, applies)
    assert "CONSTRUCTS_FIFO_MAX_JOB_DURATION_SECONDS" not in _function_variables(plain)
    assert _function_variables(bounded)["CONSTRUCTS_FIFO_MAX_JOB_DURATION_SECONDS"] == "90"


def test_max_job_duration_above_the_function_timeout_is_refused(code: lambda_.Code) -> None:
    # GIVEN a bound longer than the Lambda consumer's timeout / WHEN built / THEN refused with the fix
    problems = _problems(code, timeout=Duration.minutes(2), max_job_duration=Duration.minutes(5))
    assert problems == [
        "max_job_duration=300s is more than timeout=120s: the Lambda consumer ends every run at the "
        "function timeout, so no run could last that long; pass max_job_duration <= timeout, raise "
        "timeout, or omit max_job_duration for the default."
    ]
