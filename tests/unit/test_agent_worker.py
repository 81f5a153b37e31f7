"""The sample job code (``lambda/``), held to the sample app's contract.

``agent_worker.apply_job`` is the workspace queue's transition (pure: tested without AWS);
``accounts.apply_event`` the accounts queue's (seed 004's agent, the one the events scenario loads);
``notifier.handle`` is the notification queue's job, on a moto table; ``builds.run_tests`` the build
queue's long job (container workers), which stops when its context is cancelled. The job code ships in the
functions' asset, which holds only the runtime, so it cannot import the sample app's contract
(:mod:`constructs_fifo.demo.sample_app`): it keeps its own copies, and the contract tests below
hold them to it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

from constructs_fifo.demo.sample_app import (
    ACTIVITY_ATTRIBUTE,
    BUILD_DURATION_KEY,
    BUILD_HANDLER,
    BUILD_PASSED,
    BUILD_STARTED,
    BUILD_TYPE,
    ENV_NOTIFICATION_TABLE,
    GROUP_PREFIX,
    JOB_TYPES,
    NOTIFICATION_DELIVERED,
    NOTIFICATION_KEY,
    NOTIFICATION_TYPE,
    REPLAYS_ATTRIBUTE,
    SIMULATE,
    build_payload,
    build_result,
    group_of,
    notification_result,
    poison,
    transient_failure,
)
from constructs_fifo.demo.scenarios import events as scenario_events
from constructs_fifo.runtime import Job, PermanentJobError

LAMBDA_DIR = Path(__file__).resolve().parents[2] / "lambda"


def _load(name: str) -> ModuleType:
    """Import ``lambda/<name>.py`` as the function does: its siblings importable at the top level."""
    if str(LAMBDA_DIR) not in sys.path:
        sys.path.insert(0, str(LAMBDA_DIR))
    spec = importlib.util.spec_from_file_location(name, LAMBDA_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


simulation = _load("simulation")
worker = _load("agent_worker")
notifier = _load("notifier")
accounts = _load("accounts")
builds = _load("builds")


def _job(job_id: str, type_: str, payload: Any = None, *, group: str = "ws#w1", attempt: int = 1) -> Job:
    body = {"jobId": job_id, "type": type_, "payload": payload or {}}
    return Job(
        id=job_id, group=group, type=type_, payload=payload or {}, attempt=attempt, message_id="m", body=body
    )


def _run(jobs: list[Job]) -> dict[str, Any] | None:
    state: dict[str, Any] | None = None
    for job in jobs:
        state = worker.apply_job(job, state)
    return state


# --- the workspace transition ----------------------------------------------------------------------------


def test_jobs_apply_in_order_and_pr_knows_whether_tests_ran() -> None:
    # GIVEN patch, test, patch, PR jobs for one workspace
    jobs = [
        _job("j1", "apply_patch", {"patch": "p1"}),
        _job("j2", "run_tests"),
        _job("j3", "apply_patch"),
        _job("j4", "open_pr"),
    ]
    # WHEN the transition applies them in order, from no state
    state = _run(jobs)
    # THEN the state shows the order, and the PR is marked untested (a patch came after the tests)
    assert state is not None
    assert state["patches"] == ["p1", "j3"]
    assert state["tested_head"] == 1
    assert state["prs"] == [{"jobId": "j4", "head": 2, "tested": False}]
    assert [entry["jobId"] for entry in state["activity"]] == ["j1", "j2", "j3", "j4"]


def test_the_transition_is_pure_and_keeps_no_bookkeeping_of_its_own() -> None:
    # GIVEN a workspace state
    before = _run([_job("j1", "apply_patch")])
    assert before is not None
    snapshot = {k: list(v) if isinstance(v, list) else v for k, v in before.items()}
    # WHEN the same job is applied to it again
    after = worker.apply_job(_job("j1", "apply_patch", attempt=2), before)
    # THEN the input is untouched, and the job applies again: keeping a job single is the runtime's
    # work in state mode, not the transition's (no version, no applied list, no replay record)
    assert before == snapshot
    assert after["patches"] == ["j1", "j1"]
    assert set(after) == {"patches", "activity"}


def test_fail_attempts_fails_only_the_first_attempts() -> None:
    # GIVEN a job asking to fail twice
    payload = {"simulate": {"fail_attempts": 2}}
    # WHEN attempts 1 and 2 run THEN they fail transiently
    for attempt in (1, 2):
        with pytest.raises(worker.SimulatedFailureError, match="fail_attempts=2"):
            worker.apply_job(_job("j1", "apply_patch", payload, attempt=attempt), None)
    # AND attempt 3 applies it
    state = worker.apply_job(_job("j1", "apply_patch", payload, attempt=3), None)
    assert state["activity"] == [{"jobId": "j1", "type": "apply_patch"}]


def test_poison_raises_permanent() -> None:
    # GIVEN a poison job WHEN it runs THEN it fails permanently
    with pytest.raises(PermanentJobError, match="poison"):
        worker.apply_job(_job("j1", "apply_patch", {"simulate": "poison"}), None)


@pytest.mark.parametrize("group", ["other#w1", "ws#"])
def test_group_without_workspace_is_permanent(group: str) -> None:
    # GIVEN a job whose group names no workspace WHEN it runs THEN it fails permanently
    with pytest.raises(PermanentJobError, match="'ws#<workspaceId>'"):
        worker.apply_job(_job("j1", "apply_patch", group=group), None)


def test_unknown_type_is_permanent() -> None:
    # GIVEN an unknown job type WHEN it runs THEN it fails permanently, naming the known types
    with pytest.raises(PermanentJobError, match="apply_patch, run_tests, open_pr"):
        worker.apply_job(_job("j1", "deploy"), None)


def test_the_worker_module_makes_no_aws_call() -> None:
    # GIVEN the worker's source THEN it imports neither boto3 nor botocore: state mode stores the state
    source = (LAMBDA_DIR / "agent_worker.py").read_text()
    assert "boto3" not in source
    assert "botocore" not in source


# --- the notifier ----------------------------------------------------------------------------------------


@pytest.fixture
def notifications() -> Iterator[Any]:
    with mock_aws():
        dynamodb = boto3.resource("dynamodb", region_name="us-east-1")
        table = dynamodb.create_table(
            TableName="notifications",
            KeySchema=[{"AttributeName": NOTIFICATION_KEY, "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": NOTIFICATION_KEY, "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield table


def _notify(job_id: str, *, attempt: int = 1, payload: dict[str, Any] | None = None) -> Job:
    text = {"channel": "#agents", "text": f"PR of {job_id} opened"}
    return _job(job_id, NOTIFICATION_TYPE, {**text, **(payload or {})}, group=group_of("w1"), attempt=attempt)


def test_a_notification_is_recorded_once_and_a_second_run_is_counted_as_a_replay(notifications: Any) -> None:
    # GIVEN the notifier on its table
    store = notifier.NotificationStore(notifications)
    # WHEN a notification job runs, then runs again (its claim was lost after the effect)
    first = notifier.handle(_notify("n1"), None, store=store)
    second = notifier.handle(_notify("n1", attempt=2), None, store=store)
    # THEN both runs return the contract's result, the one stored with the job's SUCCEEDED claim
    assert first == second == notification_result("n1") == {"delivered": "n1"}
    # AND the notification is there once, as the contract names it, with the second run counted
    items = notifications.scan()["Items"]
    assert items == [
        {
            NOTIFICATION_KEY: "n1",
            "workspaceId": "w1",
            "channel": "#agents",
            "text": "PR of n1 opened",
            "slug": "pr-of-n1-opened",
            REPLAYS_ATTRIBUTE: 1,
        }
    ]


def test_the_notifier_fails_as_its_payload_asks(notifications: Any) -> None:
    # GIVEN a notification failing its first attempt WHEN attempt 1 runs THEN it fails, recording nothing
    store = notifier.NotificationStore(notifications)
    with pytest.raises(notifier.SimulatedFailureError):
        notifier.handle(_notify("n2", payload=transient_failure(1)), None, store=store)
    assert notifications.scan()["Items"] == []
    # AND attempt 2 records it
    notifier.handle(_notify("n2", attempt=2, payload=transient_failure(1)), None, store=store)
    assert [item[NOTIFICATION_KEY] for item in notifications.scan()["Items"]] == ["n2"]


def test_the_default_store_needs_the_table_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no NOTIFICATION_TABLE_NAME and no cached store
    monkeypatch.delenv(ENV_NOTIFICATION_TABLE, raising=False)
    monkeypatch.setattr(notifier, "_store", None)
    # WHEN a job runs without an injected store THEN the error names the variable
    with pytest.raises(RuntimeError, match=f"{ENV_NOTIFICATION_TABLE} is not set"):
        notifier.handle(_notify("n3"), None)


# --- the build job (container workers) ----------------------------------------------------------------


def test_a_build_runs_its_duration_and_returns_the_contracts_result() -> None:
    # GIVEN a short run_tests job on its second attempt, with a context that is never cancelled
    context = types.SimpleNamespace(cancelled=threading.Event())
    job = _job("b1", BUILD_TYPE, build_payload(0.3), group=group_of("w7"), attempt=2)
    # WHEN it runs THEN it returns the contract's result, naming the attempt that finished
    result = builds.run_tests(job, context)
    assert result == build_result("b1", "w7", 0.3, 2, result[BUILD_STARTED])


def test_a_cancelled_build_stops_without_a_result() -> None:
    # GIVEN a long build whose worker cancels the run (stale, or stopping past its grace)
    context = types.SimpleNamespace(cancelled=threading.Event())
    context.cancelled.set()
    # WHEN it runs THEN it stops at once with RunCancelledError: nothing is returned to store
    with pytest.raises(builds.RunCancelledError, match="b2"):
        builds.run_tests(_job("b2", BUILD_TYPE, build_payload(600)), context)


# --- the contract -------------------------------------------------------------------------------------


def test_the_job_code_keeps_the_contracts_names() -> None:
    # GIVEN the job code's own copies WHEN compared with the contract THEN they are the same
    assert worker.GROUP_PREFIX == GROUP_PREFIX
    assert tuple(worker.JOB_TYPES) == JOB_TYPES
    assert worker.ACTIVITY == ACTIVITY_ATTRIBUTE
    assert simulation.SIMULATE == SIMULATE
    assert notifier.ENV_NOTIFICATION_TABLE == ENV_NOTIFICATION_TABLE
    assert notifier.NOTIFICATION_KEY == NOTIFICATION_KEY
    assert notifier.REPLAYS == REPLAYS_ATTRIBUTE
    assert notifier.DELIVERED == NOTIFICATION_DELIVERED
    assert builds.DURATION_KEY == BUILD_DURATION_KEY
    assert builds.PASSED == BUILD_PASSED
    assert builds.STARTED_KEY == BUILD_STARTED
    assert f"builds.{builds.run_tests.__name__}" == BUILD_HANDLER
    # AND none imports the contract (the asset holds only the runtime)
    for path in LAMBDA_DIR.glob("*.py"):
        assert "constructs_fifo.local" not in path.read_text(), path


def test_the_worker_writes_the_activity_the_contract_reads() -> None:
    # WHEN one job of every type runs in the contract's group
    state = _run([_job(f"j{i}", job_type, group=group_of("w1")) for i, job_type in enumerate(JOB_TYPES)])
    # THEN the contract's activity attribute lists them in order, with their types
    assert state is not None
    assert state[ACTIVITY_ATTRIBUTE] == [{"jobId": f"j{i}", "type": t} for i, t in enumerate(JOB_TYPES)]


def test_the_job_codes_failures_are_asked_for_as_the_contract_says(notifications: Any) -> None:
    # GIVEN a poison payload WHEN either job function runs it THEN it fails permanently
    with pytest.raises(PermanentJobError, match="poison"):
        worker.apply_job(_job("p", JOB_TYPES[0], poison()), None)
    with pytest.raises(PermanentJobError, match="poison"):
        notifier.handle(_notify("p", payload=poison()), None, store=notifier.NotificationStore(notifications))
    # GIVEN a payload failing twice WHEN attempts 1 to 3 run THEN only the third applies it
    for attempt in (1, 2):
        with pytest.raises(worker.SimulatedFailureError):
            worker.apply_job(_job("t", JOB_TYPES[0], transient_failure(2), attempt=attempt), None)
    applied = worker.apply_job(_job("t", JOB_TYPES[0], transient_failure(2), attempt=3), None)
    assert applied[ACTIVITY_ATTRIBUTE] == [{"jobId": "t", "type": JOB_TYPES[0]}]


# --- the accounts transition ------------------------------------------------------------------------------


def _account_job(event: scenario_events.AccountEvent) -> Job:
    """The job the ingress's pipe makes of ``event`` (type the detail-type, payload the detail)."""
    body = {
        "jobId": event.event_id,
        "type": event.event_type,
        "payload": event.detail(),
        "seq": event.version,
    }
    return Job(
        id=event.event_id,
        group=event.account_id,
        type=event.event_type,
        payload=event.detail(),
        attempt=1,
        message_id="m",
        body=body,
    )


def test_the_accounts_transition_gives_the_events_scenarios_answers_in_any_order() -> None:
    # GIVEN seed 004's stories of several accounts, shuffled (so accounts see their events out of order)
    stream = scenario_events.event_stream(5, seed=4)
    # WHEN the deployed job code applies each account's events in that order
    states: dict[str, Any] = {}
    for event in stream:
        states[event.account_id] = accounts.apply_event(_account_job(event), states.get(event.account_id))
    # THEN it ends where the scenario's agent (the job code's apply_account_event) ends, event for event
    assert states == scenario_events.arrival_states(stream, accounts.apply_account_event)
    # AND in order it bills what the story bills
    in_order: dict[str, Any] = {}
    for event in sorted(stream, key=lambda e: (e.account_id, e.version)):
        in_order[event.account_id] = accounts.apply_event(_account_job(event), in_order.get(event.account_id))
    assert in_order == scenario_events.expected_states(stream, accounts.apply_account_event)
    assert {state["billed"] for state in in_order.values()} == {17}


def test_the_accounts_transition_keeps_the_scenarios_event_types_and_refuses_others() -> None:
    # GIVEN the job code's event types WHEN compared with the scenario's THEN they are the same
    assert accounts.EVENT_TYPES == (
        scenario_events.SUSPENDED,
        scenario_events.REACTIVATED,
        scenario_events.USAGE,
    )
    # AND a job of another type is dead at once, not retried
    event = scenario_events.account_story("acct-x")[0]
    job = dataclasses.replace(_account_job(event), type="account.deleted")
    with pytest.raises(PermanentJobError, match=r"account\.deleted"):
        accounts.apply_event(job, None)
