"""verify(): facts in, one line per check out (no AWS, no CDK CLI)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from constructs_fifo.deploy.preflight.facts import (
    AccountConcurrency,
    Bootstrap,
    CdkCli,
    Check,
    Facts,
    Identity,
    StackConcurrency,
    Status,
    Unavailable,
)
from constructs_fifo.deploy.preflight.verify import reservable, verify

#: The sample app: two functions reserving 10 each.
SAMPLE = StackConcurrency(
    source="cdk.out/AgentJobs.template.json", reserved={"A": 10, "B": 10}, requires_bootstrap=6
)


def _facts(**changes: Any) -> Facts:
    base = Facts(
        target="AWS (us-east-1)",
        region="us-east-1",
        endpoint_url=None,
        stack_name="AgentJobs",
        identity=Identity("123456789012", "arn:aws:iam::123456789012:user/dev"),
        cdk=CdkCli("/usr/bin/cdk", "2.1148.1"),
        bootstrap=Bootstrap(version=29, status="UPDATE_COMPLETE"),
        account=AccountConcurrency(limit=1000, unreserved=1000),
        stack=SAMPLE,
        known_regions=frozenset({"us-east-1", "eu-west-1"}),
    )
    return dataclasses.replace(base, **changes)


def _by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def test_a_healthy_account_passes_every_check_in_order() -> None:
    # GIVEN a bootstrapped account with the default quota WHEN verified THEN five ok lines, in order
    checks = verify(_facts())
    assert [(c.name, c.status) for c in checks] == [
        ("identity", Status.OK),
        ("region", Status.OK),
        ("cdk-cli", Status.OK),
        ("bootstrap", Status.OK),
        ("concurrency", Status.OK),
    ]
    assert all(c.fix == "" for c in checks)
    assert _by_name(checks)["concurrency"].message == (
        "stack AgentJobs reserves 20 of the 900 the account can reserve (limit 1000, unreserved 1000)"
    )


@pytest.mark.parametrize(
    ("limit", "unreserved", "deployed", "expected"),
    [
        (10, 10, 0, 0),
        (50, 50, 0, 0),
        (1000, 1000, 0, 900),
        (1000, 880, 20, 800),
        (150, 150, 0, 50),
        (5, 5, 0, 0),
    ],
)
def test_reservable_keeps_the_minimum_unreserved(
    limit: int, unreserved: int, deployed: int, expected: int
) -> None:
    # GIVEN an account's limit and unreserved concurrency, and what the stack already reserves there
    # WHEN the reservable amount is computed
    # THEN min(100, limit) stays unreserved, and what the stack holds today counts back
    assert reservable(AccountConcurrency(limit, unreserved), deployed) == expected


@pytest.mark.parametrize(("limit", "quota"), [(10, 120), (50, 120)])
def test_an_account_too_small_for_the_reservation_gets_the_numbers_and_both_fixes(
    limit: int, quota: int
) -> None:
    # GIVEN a new account whose concurrency limit is below 100
    facts = _facts(account=AccountConcurrency(limit=limit, unreserved=limit))
    # WHEN verified
    check = _by_name(verify(facts))["concurrency"]
    # THEN one problem line with the numbers, and a fix naming the quota and the flag
    assert check.status is Status.PROBLEM
    assert check.message == (
        f"stack AgentJobs reserves 20 concurrent executions (A 10, B 10) but the account can reserve 0 "
        f"(limit {limit}, unreserved {limit}, {limit} must stay unreserved); CloudFormation would fail with "
        '"decreases account\'s UnreservedConcurrentExecution below its minimum value"'
    )
    assert check.fix == (
        f"request a Lambda concurrent executions quota of at least {quota} (Service Quotas, L-B99A9384), or "
        "deploy without reserved concurrency: `constructs-fifo deploy --allow-unreserved` (each queue's "
        "MaximumConcurrency stays its ceiling; there is no floor)"
    )


def test_reservations_of_other_functions_raise_the_quota_to_ask_for() -> None:
    # GIVEN an account of 1000 where other functions reserve 890 (the stack is not deployed yet)
    facts = _facts(account=AccountConcurrency(limit=1000, unreserved=110))
    # WHEN verified THEN the stack's 20 do not fit in the 10 left, and the quota asked covers all three parts
    check = _by_name(verify(facts))["concurrency"]
    assert not check.ok
    assert (
        "the account can reserve 10 (limit 1000, unreserved 110, 100 must stay unreserved)" in check.message
    )
    assert "quota of at least 1010" in check.fix


def test_a_redeploy_counts_what_the_stack_already_reserves() -> None:
    # GIVEN the stack deployed already (its 20 are part of the account's reserved concurrency)
    facts = _facts(
        account=AccountConcurrency(limit=120, unreserved=100),
        stack=dataclasses.replace(SAMPLE, deployed_reserved=20),
    )
    # WHEN verified THEN the same reservation still fits: a deploy replaces it
    assert _by_name(verify(facts))["concurrency"].ok


def test_a_stack_without_reservation_passes_on_any_account() -> None:
    # GIVEN the stack synthesized without reserved concurrency, on an account of 10
    facts = _facts(
        account=AccountConcurrency(limit=10, unreserved=10),
        stack=dataclasses.replace(SAMPLE, reserved={}),
    )
    # WHEN verified THEN ok, and the line says what limits the functions instead
    check = _by_name(verify(facts))["concurrency"]
    assert check.ok
    assert "reserves no concurrency; each queue's MaximumConcurrency is its ceiling" in check.message


def test_an_app_that_ignores_the_unreserved_context_is_a_problem_with_its_fix() -> None:
    # GIVEN a second synth with the context that still reserves 20, on an account of 10
    facts = _facts(account=AccountConcurrency(limit=10, unreserved=10), allow_unreserved=True)
    # WHEN verified THEN the problem says the app does not read the context and how to make it
    check = _by_name(verify(facts))["concurrency"]
    assert not check.ok
    assert "the app does not read that context" in check.message
    assert "self.node.try_get_context('constructs-fifo:unreserved')" in check.fix


def test_an_endpoint_without_account_settings_passes_the_concurrency_check() -> None:
    # GIVEN an emulator that does not implement GetAccountSettings (moto answers 404)
    check = _by_name(verify(_facts(endpoint_url="http://localhost:5000", account=None)))["concurrency"]
    # THEN there is no quota to run into, and the line says so
    assert check.ok
    assert "does not implement Lambda GetAccountSettings" in check.message
    # AND it names the stack it read (the app's, without --stack) and what that stack reserves, so a
    # person sees which stack doctor checked
    assert "stack AgentJobs reserves" in check.message


def test_an_unreadable_account_setting_is_a_problem_with_the_permission_to_add() -> None:
    facts = _facts(account=Unavailable("AccessDeniedException: not authorized"))
    check = _by_name(verify(facts))["concurrency"]
    assert not check.ok
    assert check.fix.startswith("allow lambda:GetAccountSettings")


@pytest.mark.parametrize(
    ("bootstrap", "ok", "text"),
    [
        (
            Bootstrap(version=None, status=None),
            True,
            "is not bootstrapped yet: `constructs-fifo deploy` runs",
        ),
        (Bootstrap(version=5, status="UPDATE_COMPLETE"), False, "bootstrapped with version 5; this app's"),
        (Bootstrap(version=29, status="ROLLBACK_COMPLETE"), False, "is in state ROLLBACK_COMPLETE"),
        (Bootstrap(version=6, status="CREATE_COMPLETE"), True, "CDKToolkit version 6, the app requires 6"),
    ],
)
def test_bootstrap_must_exist_in_a_complete_state_and_be_recent_enough(
    bootstrap: Bootstrap, ok: bool, text: str
) -> None:
    # GIVEN the CDKToolkit stack as found, and an assembly requiring bootstrap version 6
    check = _by_name(verify(_facts(bootstrap=bootstrap)))["bootstrap"]
    # THEN missing is ok (deploy bootstraps), outdated or failed is a problem with `cdk bootstrap` as the fix
    assert check.ok is ok
    assert text in check.message
    if not ok:
        assert "cdk bootstrap aws://123456789012/us-east-1" in check.fix


def test_identity_cdk_and_region_problems_name_their_fixes() -> None:
    # GIVEN no credentials, no CDK CLI and a misspelt region
    facts = _facts(
        identity=Unavailable("NoCredentialsError"),
        cdk=Unavailable("no `cdk` on PATH"),
        region="us-east1",
    )
    checks = _by_name(verify(facts))
    # THEN three problems, each with its fix
    assert checks["identity"].fix.startswith("configure credentials")
    assert checks["cdk-cli"].fix.startswith("install it: `npm install -g aws-cdk@2`")
    assert checks["region"].message == "region 'us-east1' is not a region botocore knows for Lambda"
    # AND an endpoint accepts any region (emulators do)
    assert _by_name(verify(dataclasses.replace(facts, endpoint_url="http://localhost:1")))["region"].ok


def test_checks_and_facts_serialize_with_the_aws_clis_casing() -> None:
    # GIVEN the facts of a healthy account WHEN serialized THEN PascalCase keys, numbers kept
    facts = _facts()
    assert verify(facts)[0].to_dict() == {
        "Check": "identity",
        "Status": "ok",
        "Message": "account 123456789012 as arn:aws:iam::123456789012:user/dev",
        "Fix": "",
    }
    document = facts.to_dict()
    assert document["AccountConcurrency"] == {"Limit": 1000, "Unreserved": 1000}
    assert document["StackConcurrency"]["Total"] == 20
