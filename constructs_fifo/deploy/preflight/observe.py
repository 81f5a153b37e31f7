"""The preflight's I/O: :func:`observe` gathers the :class:`~constructs_fifo.deploy.preflight.facts.Facts`.

STS ``GetCallerIdentity``; the CDK CLI and its ``--version``; the ``CDKToolkit`` stack and its
``BootstrapVersion`` (else the SSM parameter
:data:`~constructs_fifo.deploy.preflight.BOOTSTRAP_VERSION_PARAMETER`); Lambda ``GetAccountSettings``;
the stack's reserved concurrency from its synthesized template in a cloud assembly
(:func:`read_assembly`), with the bootstrap version the assembly requires, and what the stack's
deployed functions reserve today. Read-only calls only. Every call that fails becomes an
:class:`~constructs_fifo.deploy.preflight.facts.Unavailable` fact with its reason; nothing here raises
for AWS errors.

An endpoint that does not implement ``GetAccountSettings`` (moto 5.2.5 answers 404 "Not yet
implemented") has no concurrency quota to run into: its account fact is ``None``, and the check
passes and says so.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from constructs_fifo.deploy.preflight import BOOTSTRAP_VERSION_PARAMETER
from constructs_fifo.deploy.preflight.facts import (
    AccountConcurrency,
    Bootstrap,
    CdkCli,
    Facts,
    Identity,
    StackConcurrency,
    Unavailable,
)
from constructs_fifo.stacks.aws_errors import explain_aws_error
from constructs_fifo.stacks.status import BOOTSTRAP_STACK, is_missing_stack

__all__ = ["observe", "read_assembly", "with_stack"]

#: How long ``cdk --version`` may take (Node starting on a busy machine).
_CDK_VERSION_TIMEOUT_SECONDS: Final = 120
#: Error codes of an endpoint that does not implement an API (moto: 404 "Not yet implemented").
_NOT_IMPLEMENTED: Final = frozenset({"404", "NotImplemented", "NotImplementedException"})


def _reason(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        return f"{details.get('Code', '?')}: {details.get('Message', '')}".strip()
    return " ".join(str(error).split())


def _unavailable(
    error: BotoCoreError | ClientError | ResponseParserError, *, doing: str, endpoint_url: str | None
) -> Unavailable:
    explained = explain_aws_error(error, doing=doing, endpoint_url=endpoint_url)
    if explained is None:
        return Unavailable(_reason(error))
    return Unavailable(" ".join(explained.message.split()), explained.fix)


def _not_implemented(error: ClientError) -> bool:
    details = error.response.get("Error", {})
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return str(details.get("Code")) in _NOT_IMPLEMENTED or (
        status == 404 and "not yet implemented" in str(details.get("Message", "")).lower()
    )


def _observe_identity(sts_client: Any, endpoint_url: str | None) -> Identity | Unavailable:
    try:
        found = sts_client.get_caller_identity()
    except (BotoCoreError, ResponseParserError, ClientError) as error:
        return _unavailable(error, doing="sts:GetCallerIdentity", endpoint_url=endpoint_url)
    return Identity(account=str(found["Account"]), arn=str(found["Arn"]))


def _observe_cdk(
    cdk: str | None, env: Mapping[str, str], run: Callable[..., subprocess.CompletedProcess[str]]
) -> CdkCli | Unavailable:
    if cdk is None:
        return Unavailable("no `cdk` on PATH and none in the app's node_modules/.bin")
    try:
        done = run(
            [cdk, "--version"],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=_CDK_VERSION_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Unavailable(f"`{cdk} --version` failed: {error}")
    words = done.stdout.split()
    if done.returncode != 0 or not words:
        return Unavailable(f"`{cdk} --version` exited with {done.returncode}: {done.stderr.strip()[-200:]}")
    return CdkCli(path=cdk, version=words[0])


def _observe_bootstrap(
    cloudformation_client: Any, ssm_client: Any, endpoint_url: str | None
) -> Bootstrap | Unavailable:
    doing = f"cloudformation:DescribeStacks {BOOTSTRAP_STACK}"
    try:
        stacks = cloudformation_client.describe_stacks(StackName=BOOTSTRAP_STACK)["Stacks"]
    except ClientError as error:
        if is_missing_stack(error):
            return Bootstrap(version=None, status=None)
        return _unavailable(error, doing=doing, endpoint_url=endpoint_url)
    except (BotoCoreError, ResponseParserError) as error:
        return _unavailable(error, doing=doing, endpoint_url=endpoint_url)
    [stack] = stacks
    outputs = {o.get("OutputKey"): o.get("OutputValue") for o in stack.get("Outputs", [])}
    version_text = outputs.get("BootstrapVersion")
    if version_text is None:
        try:
            version_text = ssm_client.get_parameter(Name=BOOTSTRAP_VERSION_PARAMETER)["Parameter"]["Value"]
        except (BotoCoreError, ResponseParserError, ClientError):
            version_text = None
    version = int(version_text) if version_text is not None and str(version_text).isdigit() else None
    return Bootstrap(version=version, status=str(stack["StackStatus"]))


def _observe_account(lambda_client: Any, endpoint_url: str | None) -> AccountConcurrency | Unavailable | None:
    doing = "lambda:GetAccountSettings"
    try:
        limit = lambda_client.get_account_settings()["AccountLimit"]
    except ClientError as error:
        if _not_implemented(error):
            return None
        return _unavailable(error, doing=doing, endpoint_url=endpoint_url)
    except (BotoCoreError, ResponseParserError) as error:
        return _unavailable(error, doing=doing, endpoint_url=endpoint_url)
    return AccountConcurrency(
        limit=int(limit["ConcurrentExecutions"]), unreserved=int(limit["UnreservedConcurrentExecutions"])
    )


def read_assembly(assembly: Path, stack: str) -> StackConcurrency | Unavailable:
    """Read the stack's reserved concurrency and required bootstrap version from a cloud assembly.

    ``assembly`` is the CDK CLI's output directory (``cdk.out``): its ``manifest.json`` names the
    stack's template and the bootstrap version each artifact requires.
    """
    manifest_file = assembly / "manifest.json"
    try:
        manifest = json.loads(manifest_file.read_text())
    except (OSError, ValueError) as error:
        return Unavailable(f"no readable cloud assembly at {assembly} ({error})")
    artifacts: Mapping[str, Any] = manifest.get("artifacts", {})
    template_file: str | None = None
    required: list[int] = []
    for artifact_id, artifact in artifacts.items():
        properties = artifact.get("properties", {})
        if "requiresBootstrapStackVersion" in properties:
            required.append(int(properties["requiresBootstrapStackVersion"]))
        if artifact.get("type") == "aws:cloudformation:stack" and stack in (
            artifact_id,
            properties.get("stackName"),
        ):
            template_file = properties.get("templateFile")
    if template_file is None:
        stacks = sorted(k for k, v in artifacts.items() if v.get("type") == "aws:cloudformation:stack")
        return Unavailable(f"the cloud assembly at {assembly} has no stack {stack!r} (it has {stacks})")
    try:
        template = json.loads((assembly / template_file).read_text())
    except (OSError, ValueError) as error:
        return Unavailable(f"the template {assembly / template_file} is unreadable ({error})")
    reserved = {
        logical_id: int(resource["Properties"]["ReservedConcurrentExecutions"])
        for logical_id, resource in template.get("Resources", {}).items()
        if resource.get("Type") == "AWS::Lambda::Function"
        and isinstance(resource.get("Properties", {}).get("ReservedConcurrentExecutions"), int)
    }
    return StackConcurrency(
        source=str(assembly / template_file),
        reserved=reserved,
        requires_bootstrap=max(required) if required else None,
    )


def with_stack(facts: Facts, assembly: Path, *, allow_unreserved: bool) -> Facts:
    """``facts`` with the stack read again from ``assembly`` (after a second synth)."""
    if facts.stack_name is None:
        return dataclasses.replace(facts, allow_unreserved=allow_unreserved)
    found = read_assembly(assembly, facts.stack_name)
    if isinstance(found, StackConcurrency) and isinstance(facts.stack, StackConcurrency):
        found = dataclasses.replace(found, deployed_reserved=facts.stack.deployed_reserved)
    return dataclasses.replace(facts, stack=found, allow_unreserved=allow_unreserved)


def _deployed_reserved(stack: str, cloudformation_client: Any, lambda_client: Any) -> int:
    """What the deployed stack's functions reserve today; 0 when it is not deployed or unreadable."""
    try:
        resources = cloudformation_client.describe_stack_resources(StackName=stack)["StackResources"]
    except (BotoCoreError, ResponseParserError, ClientError):
        return 0
    total = 0
    for resource in resources:
        if resource.get("ResourceType") != "AWS::Lambda::Function":
            continue
        try:
            found = lambda_client.get_function_concurrency(FunctionName=resource["PhysicalResourceId"])
        except (BotoCoreError, ResponseParserError, ClientError):
            continue
        total += int(found.get("ReservedConcurrentExecutions") or 0)
    return total


_VERSION_PATTERN: Final = re.compile(r"^\d+\.\d+\.\d+")


def observe(
    *,
    target: str,
    region: str,
    endpoint_url: str | None,
    stack: str | None,
    sts_client: Any,
    cloudformation_client: Any,
    ssm_client: Any,
    lambda_client: Any,
    cdk: str | None,
    cdk_env: Mapping[str, str],
    assembly: Path | None,
    known_regions: Sequence[str] = (),
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> Facts:
    """Gather the :class:`Facts` (read-only calls only; see the module docstring).

    Parameters
    ----------
    target, region, endpoint_url
        Where, for messages and the region rule.
    stack
        The stack whose reservation is checked (its template in ``assembly``; its deployed functions);
        ``None`` when there is none to check.
    sts_client, cloudformation_client, ssm_client, lambda_client
        boto3 clients of the target (tests pass moto's or stubbed ones).
    cdk, cdk_env
        The CDK CLI (``None``: not found) and its environment.
    assembly
        The cloud assembly directory; ``None`` when there is no app to look at.
    known_regions
        The regions of the partition (botocore's list), for the region rule on AWS.
    run
        ``subprocess.run`` (tests replace it).
    """
    stack_facts: StackConcurrency | Unavailable | None = None
    if assembly is not None and stack is not None:
        stack_facts = read_assembly(assembly, stack)
        if isinstance(stack_facts, StackConcurrency):
            stack_facts = dataclasses.replace(
                stack_facts, deployed_reserved=_deployed_reserved(stack, cloudformation_client, lambda_client)
            )
    cdk_facts = _observe_cdk(cdk, cdk_env, run)
    if isinstance(cdk_facts, CdkCli) and not _VERSION_PATTERN.match(cdk_facts.version):
        cdk_facts = Unavailable(f"`{cdk} --version` printed {cdk_facts.version!r}, not a version")
    return Facts(
        target=target,
        region=region,
        endpoint_url=endpoint_url,
        stack_name=stack,
        identity=_observe_identity(sts_client, endpoint_url),
        cdk=cdk_facts,
        bootstrap=_observe_bootstrap(cloudformation_client, ssm_client, endpoint_url),
        account=_observe_account(lambda_client, endpoint_url),
        stack=stack_facts,
        known_regions=frozenset(known_regions),
    )
