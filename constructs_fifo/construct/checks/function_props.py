"""The function's props: its code (a directory asset without a ``constructs_fifo`` of its own), the
user's environment (none of the construct's names), the bundling of its dependencies, and where and on
what it runs (VPC, subnets and security groups, architecture, tracing, layers).

Each check returns its problems, each naming the prop, its value, the rule and the fix; the check step
(:mod:`constructs_fifo.construct.checks.props`) raises them with every other problem of the call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_lambda as lambda_

from constructs_fifo.construct.code.bundling import CodeBundling
from constructs_fifo.construct.settings import defaults, tokens

__all__ = ["RESERVED_PACKAGE", "check_bundling", "check_code", "check_environment", "check_function_props"]

#: The top-level package the construct adds to the function's asset; a user asset may not hold one.
RESERVED_PACKAGE = "constructs_fifo"


def check_code(code: lambda_.Code, code_path: str | None = None) -> list[str]:
    """Check that ``code`` is an asset directory the construct can add its runtime to.

    Parameters
    ----------
    code
        The user's job code.
    code_path
        ``code.path``, when the caller has read it already (each read is a round trip to Node).

    Returns
    -------
    list of str
        The problems (at most one); empty when ``code`` is a usable directory asset.
    """
    fix = "pass code=lambda_.Code.from_asset('<directory holding your handler module>')"
    if not isinstance(code, lambda_.AssetCode):
        return [
            f"code={type(code).__name__} is not supported: the construct adds its runtime next to your "
            f"handler, so code must be a local directory asset; {fix}."
        ]
    if code_path is None:
        code_path = code.path
    path = Path(code_path)
    if not path.is_dir():
        return [
            f"code=Code.from_asset({code_path!r}) is not a directory: the construct adds its runtime "
            f"next to your handler, so a zip file or missing path cannot be used; {fix}."
        ]
    if (path / RESERVED_PACKAGE).exists():
        return [
            f"code=Code.from_asset({code_path!r}) already holds a top-level {RESERVED_PACKAGE!r}: the "
            "construct adds the installed runtime under that name and would shadow or be shadowed by "
            f"it; remove {path / RESERVED_PACKAGE} from the asset directory."
        ]
    return []


def check_environment(environment: Mapping[str, str] | None, reserved: Mapping[str, str]) -> list[str]:
    """Reject user environment variables that collide with the ones the construct writes.

    Parameters
    ----------
    environment
        The user's extra environment variables.
    reserved
        The variables the construct sets for its runtime.

    Returns
    -------
    list of str
        One message per colliding key.
    """
    if not environment:
        return []
    return [
        f"environment[{key!r}] is reserved: the construct sets it for its runtime ({reserved[key]!r}); "
        f"remove {key!r} from environment (use the matching prop instead)."
        for key in sorted(environment)
        if key in reserved
    ]


def _check_vpc(
    vpc: ec2.IVpc | None,
    vpc_subnets: ec2.SubnetSelection | None,
    security_groups: Sequence[ec2.ISecurityGroup] | None,
) -> list[str]:
    """``vpc_subnets`` and ``security_groups`` need ``vpc``; the subnets must not be public; 1 to 5 groups."""
    if vpc is None:
        return [
            f"{name} is given without vpc: it only places a function inside a VPC; pass vpc=..., or "
            f"remove {name}."
            for name, value in (("vpc_subnets", vpc_subnets), ("security_groups", security_groups))
            if value is not None
        ]
    problems: list[str] = []
    if security_groups is not None and not (
        defaults.SECURITY_GROUPS_MIN <= len(security_groups) <= defaults.SECURITY_GROUPS_MAX
    ):
        problems.append(
            f"security_groups has {len(security_groups)} group(s): a Lambda function in a VPC takes "
            f"{defaults.SECURITY_GROUPS_MIN} to {defaults.SECURITY_GROUPS_MAX} security groups; pass "
            f"{defaults.SECURITY_GROUPS_MIN} to {defaults.SECURITY_GROUPS_MAX}, or omit security_groups "
            "for one the function creates (all outbound traffic allowed, no inbound)."
        )
    public = {subnet.node.path for subnet in vpc.public_subnets}
    selection = vpc_subnets or ec2.SubnetSelection()
    selected = vpc.select_subnets(
        availability_zones=selection.availability_zones,
        one_per_az=selection.one_per_az,
        subnet_filters=selection.subnet_filters,
        subnet_group_name=selection.subnet_group_name,
        subnets=selection.subnets,
        subnet_type=selection.subnet_type,
    ).subnets
    in_public = sorted(
        s.subnet_id for s in selected if s.node.path in public and not tokens.is_unresolved(s.subnet_id)
    )
    if any(s.node.path in public for s in selected):
        named = f" ({', '.join(in_public)})" if in_public else ""
        problems.append(
            f"vpc_subnets selects public subnets{named}: a Lambda function gets no public IP address, "
            "so from a public subnet it cannot reach SQS, DynamoDB or CloudWatch and no job runs; pass "
            "vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS) (or "
            "isolated subnets with SQS, DynamoDB and CloudWatch VPC endpoints)."
        )
    return problems


def _runtime_attribute(runtime: str) -> str:
    """``python3.14`` -> ``PYTHON_3_14``, the name of the runtime in ``lambda_.Runtime``."""
    return runtime.upper().replace("PYTHON", "PYTHON_").replace(".", "_")


def _check_layers(layers: Sequence[lambda_.ILayerVersion] | None) -> list[str]:
    """At most 5 layers, each compatible with the function's runtime (when the layer says)."""
    if not layers:
        return []
    problems: list[str] = []
    if len(layers) > defaults.LAYERS_MAX:
        problems.append(
            f"layers has {len(layers)} layers: a Lambda function takes at most {defaults.LAYERS_MAX}; "
            f"pass at most {defaults.LAYERS_MAX} (merge layers, or bundle the dependencies with the job "
            "code: a requirements.txt in its directory)."
        )
    runtime = defaults.FUNCTION_RUNTIME.name
    for index, layer in enumerate(layers):
        compatible = layer.compatible_runtimes
        if compatible and runtime not in {r.name for r in compatible}:
            names = ", ".join(sorted(r.name for r in compatible))
            problems.append(
                f"layers[{index}] ({layer.node.path}) is compatible with {names}, not the function's "
                f"{runtime}; pass a layer built for {runtime} (compatible_runtimes including "
                f"lambda_.Runtime.{_runtime_attribute(runtime)}), or remove it."
            )
    return problems


def check_function_props(
    *,
    vpc: ec2.IVpc | None,
    vpc_subnets: ec2.SubnetSelection | None,
    security_groups: Sequence[ec2.ISecurityGroup] | None,
    architecture: lambda_.Architecture,
    tracing: lambda_.Tracing | None,
    layers: Sequence[lambda_.ILayerVersion] | None,
) -> list[str]:
    """Collect every problem of the function's placement and platform props.

    Returns
    -------
    list of str
        One message per problem, each naming the prop, its value, the rule and the fix.
    """
    problems = _check_vpc(vpc, vpc_subnets, security_groups)
    if architecture.name not in defaults.WHEEL_PLATFORMS:
        supported = " or ".join(f"lambda_.Architecture.{n}" for n in defaults.ARCHITECTURE_NAMES)
        problems.append(
            f"architecture={architecture.name!r} is not one Lambda runs: it must be x86_64 or arm64; pass "
            f"architecture={supported}, or omit it for x86_64."
        )
    if tracing is not None and not isinstance(tracing, lambda_.Tracing):
        problems.append(
            f"tracing={tracing!r} is not a lambda_.Tracing: pass lambda_.Tracing.ACTIVE, "
            "PASS_THROUGH or DISABLED, or omit it for no tracing configuration."
        )
    problems += _check_layers(layers)
    return problems


def check_bundling(bundling: CodeBundling | None) -> list[str]:
    """The ``bundling`` prop: a :class:`CodeBundling`; its requirements unused with Docker bundling."""
    if bundling is None:
        return []
    if not isinstance(bundling, CodeBundling):
        return [
            f"bundling={type(bundling).__name__} is not a CodeBundling: pass "
            "bundling=CodeBundling(exclude=[...], requirements=[...]) (from constructs_fifo), or omit it."
        ]
    problems: list[str] = []
    if isinstance(bundling.exclude, str) or isinstance(bundling.requirements, str):
        problems.append(
            "bundling.exclude and bundling.requirements are lists of strings, not one string: pass "
            "e.g. CodeBundling(exclude=['tests'], requirements=['httpx==0.28.1'])."
        )
    if bundling.docker is not None and bundling.requirements:
        problems.append(
            f"bundling.requirements={list(bundling.requirements)!r} does nothing with bundling.docker: "
            "Docker bundling installs what its own command installs; remove requirements, or remove "
            "docker to install them without Docker."
        )
    if bundling.no_index and not bundling.find_links:
        problems.append(
            "bundling.no_index=True without find_links leaves the installer nowhere to find wheels: pass "
            "find_links=['<directory of wheels>'], or no_index=False."
        )
    return problems
