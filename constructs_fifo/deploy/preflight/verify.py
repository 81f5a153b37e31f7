"""The preflight's rules: :func:`verify` turns :class:`~constructs_fifo.deploy.preflight.facts.Facts`
into one :class:`~constructs_fifo.deploy.preflight.facts.Check` per line: ``ok``, or ``problem`` with its
fix. Pure: no AWS, no CDK CLI.

The concurrency rule
--------------------
AWS keeps a minimum of the account's concurrency unreserved: 100 on a normal account, the whole limit
on an account whose limit is below that (new accounts start at 10 or 50; the error then reads "...
below its minimum value of [10]"). So the stack can reserve at most::

    UnreservedConcurrentExecutions + (what the stack's functions reserve today) - min(100, limit)

What the stack reserves today is counted back in because a deploy replaces it. When the stack needs
more, the fix names both ways out: raise the quota (Service Quotas,
:data:`~constructs_fifo.deploy.preflight.CONCURRENCY_QUOTA_CODE`), or deploy without reserved concurrency
(:data:`~constructs_fifo.deploy.preflight.ALLOW_UNRESERVED_FLAG`: the app is synthesized again with the
context :data:`~constructs_fifo.deploy.preflight.UNRESERVED_CONTEXT` set, and each queue's
MaximumConcurrency stays its ceiling).

An endpoint without ``GetAccountSettings`` (an account fact of ``None``, see
:mod:`~constructs_fifo.deploy.preflight.observe`) has no concurrency quota to run into: the check
passes and says so.

Examples
--------
>>> from constructs_fifo.deploy.preflight.facts import (
...     AccountConcurrency, Bootstrap, CdkCli, Facts, Identity, StackConcurrency)
>>> facts = Facts(target="AWS (us-east-1)", region="us-east-1", endpoint_url=None, stack_name="AgentJobs",
...     identity=Identity("123456789012", "arn:aws:iam::123456789012:user/me"),
...     cdk=CdkCli("/usr/bin/cdk", "2.1100.0"), bootstrap=Bootstrap(version=29, status="UPDATE_COMPLETE"),
...     account=AccountConcurrency(limit=10, unreserved=10),
...     stack=StackConcurrency(source="cdk.out", reserved={"Fn": 20}, requires_bootstrap=6))
>>> [check.status.value for check in verify(facts)]
['ok', 'ok', 'ok', 'ok', 'problem']
"""

from __future__ import annotations

from constructs_fifo.deploy.preflight import (
    ALLOW_UNRESERVED_FLAG,
    CONCURRENCY_QUOTA_CODE,
    MINIMUM_UNRESERVED,
    UNRESERVED_CONTEXT,
)
from constructs_fifo.deploy.preflight.facts import (
    AccountConcurrency,
    Check,
    Facts,
    Identity,
    StackConcurrency,
    Status,
    Unavailable,
)
from constructs_fifo.stacks.status import BOOTSTRAP_STACK, COMPLETE_STATES

__all__ = ["reservable", "verify"]


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


_UNREADABLE_STACK_FIX = (
    "pass --stack naming one of the app's stacks (and --app-dir for an app elsewhere), or run `cdk synth` "
    "in the app's directory, then try again"
)


def _check_concurrency(facts: Facts) -> Check:
    account, stack = facts.account, facts.stack
    if isinstance(account, Unavailable):
        return Check(
            "concurrency",
            Status.PROBLEM,
            f"Lambda GetAccountSettings failed: {account.reason}",
            account.fix
            or "allow lambda:GetAccountSettings to the deploying identity, so the reservation can be checked",
        )
    if isinstance(stack, Unavailable):
        # Never "ok" for a stack that could not be read, with or without a quota to compare it with.
        found = ""
        if isinstance(account, AccountConcurrency):
            can = reservable(account)
            found = (
                f"; the account can reserve {can} (limit {account.limit}, unreserved {account.unreserved})"
            )
        return Check(
            "concurrency",
            Status.PROBLEM,
            f"the stack's reserved concurrency is unknown: {stack.reason}{found}",
            _UNREADABLE_STACK_FIX,
        )
    if account is None:
        # name the stack read (the app's own without --stack): what doctor checked, quota or none
        read = (
            f"stack {facts.stack_name} reserves {stack.total} ({stack.source}); "
            if isinstance(stack, StackConcurrency)
            else ""
        )
        return Check(
            "concurrency",
            Status.OK,
            f"{read}the endpoint does not implement Lambda GetAccountSettings (an emulator has no "
            "concurrency quota): nothing to check",
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
