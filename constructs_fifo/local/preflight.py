"""Preflight: what a real account would refuse, found before CloudFormation runs.

Used by ``constructs-fifo deploy`` (before ``cdk deploy``) and by ``constructs-fifo doctor``
(read-only). Two halves, so the rules can be tested without AWS:

- :func:`observe` gathers :class:`Facts`: STS ``GetCallerIdentity``; the CDK CLI and its
  ``--version``; the ``CDKToolkit`` stack and its ``BootstrapVersion`` (else the SSM parameter
  :data:`BOOTSTRAP_VERSION_PARAMETER`); Lambda ``GetAccountSettings``; the stack's reserved
  concurrency from its synthesized template in a cloud assembly, with the bootstrap version the
  assembly requires, and what the stack's deployed functions reserve today. Every call that fails
  becomes an :class:`Unavailable` fact with its reason; nothing here raises for AWS errors.
- :func:`verify` turns facts into one :class:`Check` per line: ``ok``, or ``problem`` with its fix.

The concurrency rule
--------------------
AWS keeps a minimum of the account's concurrency unreserved: 100 on a normal account, the whole limit
on an account whose limit is below that (new accounts start at 10 or 50; the error then reads "...
below its minimum value of [10]"). So the stack can reserve at most::

    UnreservedConcurrentExecutions + (what the stack's functions reserve today) - min(100, limit)

What the stack reserves today is counted back in because a deploy replaces it. When the stack needs
more, the fix names both ways out: raise the quota (Service Quotas, :data:`CONCURRENCY_QUOTA_CODE`), or
deploy without reserved concurrency (:data:`ALLOW_UNRESERVED_FLAG`: the app is synthesized again with
the context :data:`UNRESERVED_CONTEXT` set, and each queue's MaximumConcurrency stays its ceiling).

An endpoint that does not implement ``GetAccountSettings`` (moto 5.2.5 answers 404 "Not yet
implemented") has no concurrency quota to run into: the check passes and says so.

Examples
--------
>>> facts = Facts(target="AWS (us-east-1)", region="us-east-1", endpoint_url=None, stack_name="AgentJobs",
...     identity=Identity("123456789012", "arn:aws:iam::123456789012:user/me"),
...     cdk=CdkCli("/usr/bin/cdk", "2.1100.0"), bootstrap=Bootstrap(version=29, status="UPDATE_COMPLETE"),
...     account=AccountConcurrency(limit=10, unreserved=10),
...     stack=StackConcurrency(source="cdk.out", reserved={"Fn": 20}, requires_bootstrap=6))
>>> [check.status.value for check in verify(facts)]
['ok', 'ok', 'ok', 'ok', 'problem']
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from constructs_fifo.local.aws_errors import explain_aws_error
from constructs_fifo.local.stack_status import BOOTSTRAP_STACK, COMPLETE_STATES, is_missing_stack

__all__ = [
    "ALLOW_UNRESERVED_FLAG",
    "BOOTSTRAP_VERSION_PARAMETER",
    "CONCURRENCY_QUOTA_CODE",
    "MINIMUM_UNRESERVED",
    "UNRESERVED_CONTEXT",
    "AccountConcurrency",
    "Bootstrap",
    "CdkCli",
    "Check",
    "Facts",
    "Identity",
    "StackConcurrency",
    "Status",
    "Unavailable",
    "observe",
    "read_assembly",
    "reservable",
    "verify",
    "with_stack",
]

#: Lambda keeps this much of an account's concurrency unreserved (the whole limit when it is lower).
MINIMUM_UNRESERVED: Final = 100
#: Service Quotas code of Lambda's "Concurrent executions" quota.
CONCURRENCY_QUOTA_CODE: Final = "L-B99A9384"
#: Where ``cdk bootstrap`` (default qualifier) records its version; the templates' rule checks it.
BOOTSTRAP_VERSION_PARAMETER: Final = "/cdk-bootstrap/hnb659fds/version"
#: CDK context that tells an app to reserve no concurrency; the sample app (``app.py``) reads it.
UNRESERVED_CONTEXT: Final = "constructs-fifo:unreserved"
#: The ``deploy`` flag that allows deploying without reserved concurrency when the account cannot hold it.
ALLOW_UNRESERVED_FLAG: Final = "--allow-unreserved"
#: How long ``cdk --version`` may take (Node starting on a busy machine).
_CDK_VERSION_TIMEOUT_SECONDS: Final = 120
#: Error codes of an endpoint that does not implement an API (moto: 404 "Not yet implemented").
_NOT_IMPLEMENTED: Final = frozenset({"404", "NotImplemented", "NotImplementedException"})


class Status(StrEnum):
    """A check's outcome."""

    OK = "ok"
    PROBLEM = "problem"


@dataclass(frozen=True, slots=True)
class Unavailable:
    """A fact that could not be read, with the reason (e.g. the AWS error) and, when known, the fix."""

    reason: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class Identity:
    """STS GetCallerIdentity."""

    account: str
    arn: str


@dataclass(frozen=True, slots=True)
class CdkCli:
    """The CDK CLI that would run, and what ``cdk --version`` printed (its first word)."""

    path: str
    version: str


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """The ``CDKToolkit`` stack: ``status`` ``None`` when there is none; ``version`` when readable."""

    version: int | None
    status: str | None


@dataclass(frozen=True, slots=True)
class AccountConcurrency:
    """Lambda GetAccountSettings' ``AccountLimit``."""

    limit: int
    unreserved: int


@dataclass(frozen=True, slots=True)
class StackConcurrency:
    """What the synthesized stack reserves, per function logical id, and what its assembly requires.

    Attributes
    ----------
    source
        The cloud assembly (or template) read, for messages.
    reserved
        ``ReservedConcurrentExecutions`` of each function that sets it.
    requires_bootstrap
        The highest ``requiresBootstrapStackVersion`` in the assembly's manifest (``None``: not stated).
    deployed_reserved
        What the stack's deployed functions reserve today (0 when the stack is not deployed).
    """

    source: str
    reserved: Mapping[str, int]
    requires_bootstrap: int | None = None
    deployed_reserved: int = 0

    @property
    def total(self) -> int:
        """The stack's total reserved concurrency."""
        return sum(self.reserved.values())


@dataclass(frozen=True)
class Facts:
    """Everything the checks look at; ``None`` where there was nothing to look at."""

    target: str
    region: str
    endpoint_url: str | None
    stack_name: str
    identity: Identity | Unavailable
    cdk: CdkCli | Unavailable
    bootstrap: Bootstrap | Unavailable
    account: AccountConcurrency | Unavailable | None
    stack: StackConcurrency | Unavailable | None
    known_regions: frozenset[str] = field(default_factory=frozenset)
    allow_unreserved: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The facts as JSON-ready data (for ``doctor --output json``)."""

        def plain(value: object) -> object:
            if value is None or isinstance(value, str | int):
                return value
            if isinstance(value, Unavailable):
                return {"Unavailable": value.reason}
            if isinstance(value, StackConcurrency):
                return {
                    "Source": value.source,
                    "ReservedConcurrentExecutions": dict(value.reserved),
                    "Total": value.total,
                    "RequiresBootstrapStackVersion": value.requires_bootstrap,
                    "DeployedReserved": value.deployed_reserved,
                }
            fields = getattr(value, "__dataclass_fields__", {})
            return {name.title().replace("_", ""): getattr(value, name) for name in fields}

        return {
            "Target": self.target,
            "Region": self.region,
            "EndpointUrl": self.endpoint_url,
            "Stack": self.stack_name,
            "Identity": plain(self.identity),
            "CdkCli": plain(self.cdk),
            "Bootstrap": plain(self.bootstrap),
            "AccountConcurrency": plain(self.account),
            "StackConcurrency": plain(self.stack),
        }


@dataclass(frozen=True, slots=True)
class Check:
    """One preflight line: ``name``, ``status``, what was found and, for a problem, the fix."""

    name: str
    status: Status
    message: str
    fix: str = ""

    @property
    def ok(self) -> bool:
        """Whether the check passed."""
        return self.status is Status.OK

    def to_dict(self) -> dict[str, str]:
        """``{"Check": ..., "Status": ..., "Message": ..., "Fix": ...}`` (the AWS CLI's casing)."""
        return {"Check": self.name, "Status": str(self.status), "Message": self.message, "Fix": self.fix}


# --- verify: facts -> lines ------------------------------------------------------------------------


def reservable(account: AccountConcurrency, deployed_reserved: int = 0) -> int:
    """How much concurrency a stack may reserve (see the module docstring); never below 0."""
    minimum = min(MINIMUM_UNRESERVED, account.limit)
    return max(0, account.unreserved + deployed_reserved - minimum)


def _check_identity(facts: Facts) -> Check:
    if isinstance(facts.identity, Unavailable):
        return Check(
            "identity",
            Status.PROBLEM,
            f"no caller identity on {facts.target}: {facts.identity.reason}",
            facts.identity.fix
            or "configure credentials (`aws configure`, `aws sso login`, or AWS_PROFILE) for the account "
            "to deploy to",
        )
    return Check("identity", Status.OK, f"account {facts.identity.account} as {facts.identity.arn}")


def _check_region(facts: Facts) -> Check:
    if facts.endpoint_url is None and facts.known_regions and facts.region not in facts.known_regions:
        return Check(
            "region",
            Status.PROBLEM,
            f"region {facts.region!r} is not a region botocore knows for Lambda",
            "pass --region (or set AWS_REGION) to a region such as us-east-1",
        )
    where = facts.endpoint_url or "AWS"
    return Check("region", Status.OK, f"{facts.region} on {where}")


def _check_cdk(facts: Facts) -> Check:
    if isinstance(facts.cdk, Unavailable):
        return Check(
            "cdk-cli",
            Status.PROBLEM,
            f"no usable AWS CDK CLI: {facts.cdk.reason}",
            "install it: `npm install -g aws-cdk@2`, or `npm install aws-cdk@2` in the app's directory",
        )
    return Check("cdk-cli", Status.OK, f"{facts.cdk.version} at {facts.cdk.path}")


def _environment(facts: Facts) -> str:
    account = facts.identity.account if isinstance(facts.identity, Identity) else "ACCOUNT"
    return f"aws://{account}/{facts.region}"


def _check_bootstrap(facts: Facts) -> Check:
    bootstrap, environment = facts.bootstrap, _environment(facts)
    if isinstance(bootstrap, Unavailable):
        return Check(
            "bootstrap",
            Status.PROBLEM,
            f"the {BOOTSTRAP_STACK} stack could not be read: {bootstrap.reason}",
            bootstrap.fix
            or "allow cloudformation:DescribeStacks and ssm:GetParameter on the bootstrap resources",
        )
    required = facts.stack.requires_bootstrap if isinstance(facts.stack, StackConcurrency) else None
    if bootstrap.status is None:
        return Check(
            "bootstrap",
            Status.OK,
            f"{environment} is not bootstrapped yet: `constructs-fifo deploy` runs `cdk bootstrap "
            f"{environment}` first (it creates an S3 bucket, an ECR repository and IAM roles)",
        )
    if bootstrap.status not in COMPLETE_STATES:
        return Check(
            "bootstrap",
            Status.PROBLEM,
            f"the {BOOTSTRAP_STACK} stack of {environment} is in state {bootstrap.status}",
            f"look at its events, delete it if it rolled back, and run `cdk bootstrap {environment}`",
        )
    if required is not None and (bootstrap.version is None or bootstrap.version < required):
        found = "no version" if bootstrap.version is None else f"version {bootstrap.version}"
        return Check(
            "bootstrap",
            Status.PROBLEM,
            f"{environment} is bootstrapped with {found}; this app's assembly requires version {required} "
            "or later (CloudFormation would refuse the deploy)",
            f"run `cdk bootstrap {environment}` (it upgrades the {BOOTSTRAP_STACK} stack in place)",
        )
    needs = f", the app requires {required}" if required is not None else ""
    found = f"{environment}: {BOOTSTRAP_STACK} version {bootstrap.version}{needs}"
    return Check("bootstrap", Status.OK, found)


def _check_concurrency(facts: Facts) -> Check:
    account, stack = facts.account, facts.stack
    if account is None:
        return Check(
            "concurrency",
            Status.OK,
            "the endpoint does not implement Lambda GetAccountSettings (an emulator has no concurrency "
            "quota): nothing to check",
        )
    if isinstance(account, Unavailable):
        return Check(
            "concurrency",
            Status.PROBLEM,
            f"Lambda GetAccountSettings failed: {account.reason}",
            account.fix
            or "allow lambda:GetAccountSettings to the deploying identity, so the reservation can be checked",
        )
    limits = f"limit {account.limit}, unreserved {account.unreserved}"
    deployed = stack.deployed_reserved if isinstance(stack, StackConcurrency) else 0
    can = reservable(account, deployed)
    if stack is None:
        return Check(
            "concurrency",
            Status.OK,
            f"the account can reserve {can} ({limits}); no app to compare it with",
        )
    if isinstance(stack, Unavailable):
        return Check(
            "concurrency",
            Status.PROBLEM,
            f"the stack's reserved concurrency is unknown: {stack.reason}; the account can reserve {can} "
            f"({limits})",
            "run `cdk synth` in the app's directory (or pass --app-dir), then try again",
        )
    if stack.total == 0:
        how = f" (synthesized with {UNRESERVED_CONTEXT}=true)" if facts.allow_unreserved else ""
        return Check(
            "concurrency",
            Status.OK,
            f"stack {facts.stack_name} reserves no concurrency{how}; each queue's MaximumConcurrency is "
            f"its ceiling; the account can reserve {can} ({limits})",
        )
    if stack.total <= can:
        return Check(
            "concurrency",
            Status.OK,
            f"stack {facts.stack_name} reserves {stack.total} of the {can} the account can reserve "
            f"({limits})",
        )
    minimum = min(MINIMUM_UNRESERVED, account.limit)
    if facts.allow_unreserved:
        return Check(
            "concurrency",
            Status.PROBLEM,
            f"stack {facts.stack_name} still reserves {stack.total} concurrent executions when synthesized "
            f"with --context {UNRESERVED_CONTEXT}=true (the account can reserve {can}; {limits}): the app "
            "does not read that context",
            f"in the app, pass reserved_concurrency=None to each OrderedAgentQueue when "
            f"`self.node.try_get_context({UNRESERVED_CONTEXT!r})` is set (see docs/deploying.md), or "
            f"request a higher Lambda concurrent executions quota ({CONCURRENCY_QUOTA_CODE})",
        )
    reserved_by_others = account.limit - account.unreserved - deployed
    needed_limit = stack.total + MINIMUM_UNRESERVED + reserved_by_others
    return Check(
        "concurrency",
        Status.PROBLEM,
        f"stack {facts.stack_name} reserves {stack.total} concurrent executions "
        f"({', '.join(f'{k} {v}' for k, v in sorted(stack.reserved.items()))}) but the account can reserve "
        f"{can} ({limits}, {minimum} must stay unreserved); CloudFormation would fail with "
        '"decreases account\'s UnreservedConcurrentExecution below its minimum value"',
        f"request a Lambda concurrent executions quota of at least {needed_limit} (Service Quotas, "
        f"{CONCURRENCY_QUOTA_CODE}), or deploy without reserved concurrency: `constructs-fifo deploy "
        f"{ALLOW_UNRESERVED_FLAG}` (each queue's MaximumConcurrency stays its ceiling; there is no floor)",
    )


def verify(facts: Facts) -> list[Check]:
    """One :class:`Check` per line: identity, region, CDK CLI, bootstrap, concurrency."""
    return [
        _check_identity(facts),
        _check_region(facts),
        _check_cdk(facts),
        _check_bootstrap(facts),
        _check_concurrency(facts),
    ]


# --- observe: AWS and the CDK CLI -> facts ---------------------------------------------------------


def _reason(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        return f"{details.get('Code', '?')}: {details.get('Message', '')}".strip()
    return " ".join(str(error).split())


def _unavailable(error: BotoCoreError | ClientError, *, doing: str, endpoint_url: str | None) -> Unavailable:
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
    except (BotoCoreError, ClientError) as error:
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
    except BotoCoreError as error:
        return _unavailable(error, doing=doing, endpoint_url=endpoint_url)
    [stack] = stacks
    outputs = {o.get("OutputKey"): o.get("OutputValue") for o in stack.get("Outputs", [])}
    version_text = outputs.get("BootstrapVersion")
    if version_text is None:
        try:
            version_text = ssm_client.get_parameter(Name=BOOTSTRAP_VERSION_PARAMETER)["Parameter"]["Value"]
        except (BotoCoreError, ClientError):
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
    except BotoCoreError as error:
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
    found = read_assembly(assembly, facts.stack_name)
    if isinstance(found, StackConcurrency) and isinstance(facts.stack, StackConcurrency):
        found = dataclasses.replace(found, deployed_reserved=facts.stack.deployed_reserved)
    return dataclasses.replace(facts, stack=found, allow_unreserved=allow_unreserved)


def _deployed_reserved(stack: str, cloudformation_client: Any, lambda_client: Any) -> int:
    """What the deployed stack's functions reserve today; 0 when it is not deployed or unreadable."""
    try:
        resources = cloudformation_client.describe_stack_resources(StackName=stack)["StackResources"]
    except (BotoCoreError, ClientError):
        return 0
    total = 0
    for resource in resources:
        if resource.get("ResourceType") != "AWS::Lambda::Function":
            continue
        try:
            found = lambda_client.get_function_concurrency(FunctionName=resource["PhysicalResourceId"])
        except (BotoCoreError, ClientError):
            continue
        total += int(found.get("ReservedConcurrentExecutions") or 0)
    return total


_VERSION_PATTERN: Final = re.compile(r"^\d+\.\d+\.\d+")


def observe(
    *,
    target: str,
    region: str,
    endpoint_url: str | None,
    stack: str,
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
        The stack whose reservation is checked (its template in ``assembly``; its deployed functions).
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
    if assembly is not None:
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
