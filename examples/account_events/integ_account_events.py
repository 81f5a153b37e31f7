#!/usr/bin/env python3
"""Integration test for a real account: ``integ-runner --directory examples --language python``.

Deploys ``AccountEventsStack`` (as ``AccountEventsInteg``, on a bus of its own), then, through the
integ-tests assertion provider (a Lambda function making AWS calls), publishes two accounts' events on
the bus **in a shuffled order** and waits, up to 10 minutes, until each account's state in the queue's
state table is the state its events give **in the order they happened**: the rule, the staging queue,
the pipe's paths (group, job id, job type, ``seq``), the event source mapping and the deployed
``ledger.apply_event`` all worked on AWS. Then integ-runner destroys the stack.

Without an account, the snapshot of this app (``integ_account_events.py.snapshot/``) is what CI
compares (tests/infrastructure/test_integ_snapshots.py), so a change to the template shows in review.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from account_events_stack import EVENT_SOURCE, AccountEventsStack
from aws_cdk import App, Duration
from aws_cdk.integ_tests_alpha import ExpectedResult, IApiCall, IntegTest

from constructs_fifo.runtime.constants import GROUP_ATTR_GROUP, GROUP_ATTR_SK, STATE_ATTR_STATE, STATE_SK

sys.path.insert(0, str(Path(__file__).resolve().parent / "jobs"))
from ledger import apply_account_event  # the job code, beside the app

STACK_NAME = "AccountEventsInteg"
#: Each account's story, in the order it happened: the withdrawal while frozen is refused.
STORY: tuple[tuple[str, dict[str, int]], ...] = (
    ("account.opened", {}),
    ("funds.deposited", {"amount": 100}),
    ("account.frozen", {}),
    ("funds.withdrawn", {"amount": 30}),
    ("account.unfrozen", {}),
    ("funds.withdrawn", {"amount": 50}),
)
ACCOUNTS = ("integ-acct-1", "integ-acct-2")
#: The publish order: a fixed shuffle (versions out of order in both accounts), so the snapshot is stable.
PUBLISH_ORDER = (3, 0, 5, 1, 4, 2)
#: Every assertion waits (its waiter fails the assertion stack's deployment when it never holds), so a
#: plain `cdk deploy` of this app fails on a failed assertion too, not only integ-runner.
WAIT = Duration.minutes(10)
POLL = Duration.seconds(15)
SETTLED = Duration.minutes(2)


def _entry(bus_name: str, account: str, version: int) -> dict[str, str]:
    event_type, detail = STORY[version]
    body = {"accountId": account, "version": version, "eventId": f"{account}-v{version}", **detail}
    return {
        "Source": EVENT_SOURCE,
        "DetailType": event_type,
        "Detail": json.dumps(body),
        "EventBusName": bus_name,
    }


def _in_order_state(account: str) -> str:
    """The account's state as the state table stores it (compact JSON) after its events in order."""
    state = None
    for event_type, detail in STORY:
        state = apply_account_event(event_type, detail, state)
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


app = App()
stack = AccountEventsStack(app, STACK_NAME, event_bus_name=STACK_NAME)
integ = IntegTest(app, "AccountEventsIntegTest", test_cases=[stack], stack_update_workflow=False)
state_table = stack.accounts.state_table
assert state_table is not None  # state mode

# One PutEvents per account (at most 10 entries a call), each in the shuffled order.
step: IApiCall | None = None
for account in ACCOUNTS:
    entries = [_entry(STACK_NAME, account, version) for version in PUBLISH_ORDER]
    put = integ.assertions.aws_api_call("EventBridge", "putEvents", {"Entries": entries})
    put.expect(ExpectedResult.object_like({"FailedEntryCount": 0}))
    # A retried PutEvents publishes the same events again: the pipe's deduplication id is the event id
    # (5 minutes), and an account's state never applies a seq twice.
    put.wait_for_assertions(total_timeout=SETTLED)
    step = put if step is None else step.next(put)
for account in ACCOUNTS:
    read = integ.assertions.aws_api_call(
        "DynamoDB",
        "getItem",
        {
            "TableName": state_table.table_name,
            "Key": {GROUP_ATTR_GROUP: {"S": account}, GROUP_ATTR_SK: {"S": STATE_SK}},
            "ConsistentRead": True,
        },
    )
    read.expect(ExpectedResult.object_like({"Item": {STATE_ATTR_STATE: {"S": _in_order_state(account)}}}))
    read.wait_for_assertions(total_timeout=WAIT, interval=POLL)
    assert step is not None
    step = step.next(read)

app.synth()
