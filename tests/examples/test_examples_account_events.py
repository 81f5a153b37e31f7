"""examples/account_events on the emulator: shuffled account events through the bus converge by ``seq``.

The example deploys from its own directory; every account's events (each a version 0, 1, 2, ... of its
account) are published on its bus in one shuffled order, then moved as a user moves them locally:
``constructs-fifo pipes run`` (the local EventBridge Pipe, from the staging queue into the FIFO queue)
and ``constructs-fifo drain`` (the local event source mapping running the deployed ``ledger.apply_event``).
Every account must end in the state its events give in the order they happened, and the run must show
that the shuffle mattered: some account applied in arrival order would end elsewhere.

Marked ``e2e``: the examples' emulator (tests/examples/conftest.py), this example's stack deployed once.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_OK, main
from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.stacks.deployed import resolve_queue

from .conftest import Deployment, Emulator, deployed_example, load_job_module

pytestmark = pytest.mark.e2e

STACK = "AccountEvents"
BUS = "AccountEvents"
SOURCE = "example.accounts"
ACCOUNTS = 8


LEDGER = load_job_module("account_events", "ledger")


def _story(account: str) -> list[tuple[str, dict[str, Any]]]:
    """One account's events in the order they happened: a withdrawal while frozen is refused, one after
    the unfreeze goes through, so order decides the balance."""
    return [
        ("account.opened", {}),
        ("funds.deposited", {"amount": 100}),
        ("account.frozen", {}),
        ("funds.withdrawn", {"amount": 30}),
        ("account.unfrozen", {}),
        ("funds.withdrawn", {"amount": 50}),
    ]


def _events(run: str) -> list[dict[str, Any]]:
    events = []
    for n in range(ACCOUNTS):
        account = f"acct-{run}-{n}"
        for version, (event_type, detail) in enumerate(_story(account)):
            events.append(
                {
                    "Source": SOURCE,
                    "DetailType": event_type,
                    "EventBusName": BUS,
                    "Detail": json.dumps(
                        {
                            "accountId": account,
                            "version": version,
                            "eventId": f"{account}-v{version}",
                            **detail,
                        }
                    ),
                }
            )
    random.Random(run).shuffle(events)
    return events


def _replay(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each account's state when its events are applied in the given order."""
    states: dict[str, dict[str, Any]] = {}
    for event in events:
        detail = json.loads(event["Detail"])
        account = detail["accountId"]
        states[account] = LEDGER.apply_account_event(event["DetailType"], detail, states.get(account))
    return states


@pytest.fixture(scope="module")
def example(examples_emulator: Emulator) -> Deployment:
    return deployed_example(examples_emulator, "account_events", STACK)


def test_shuffled_account_events_converge_by_seq(
    example: Deployment, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the deployed example and each account's events published on its bus in a shuffled order
    started = time.monotonic()
    target = example.target
    events = _events("s7")
    for start in range(0, len(events), 10):
        response = target.client("events").put_events(Entries=events[start : start + 10])
        assert response["FailedEntryCount"] == 0, response
    in_order = _replay(sorted(events, key=lambda e: json.loads(e["Detail"])["version"]))
    as_arrived = _replay(events)
    # WHEN the pipe moves them into the FIFO queue and the queue drains through the deployed function
    endpoint = ["--endpoint-url", example.endpoint_url, "--stack", STACK]
    assert main(["pipes", "run", *endpoint, "--json"]) == EXIT_OK, capsys.readouterr().out
    moved = json.loads(capsys.readouterr().out)
    assert main(["drain", *endpoint]) == EXIT_OK, capsys.readouterr().out
    drained = json.loads(capsys.readouterr().out)
    # THEN the pipe sent every event, and the drain ran them all without a failure
    assert sum(pipe["sent"] for pipe in moved["pipes"]) == len(events), moved
    # AND every account's ledger is the one its events give in the order they happened
    queue = resolve_queue(STACK, target=target)
    assert queue.group_table is not None  # state mode
    reader = GroupStateReader(queue.group_table, target.client("dynamodb"))
    observed = {account: reader.get(account, consistent_read=True) for account in in_order}
    assert observed == in_order
    assert all(state["balance"] == 50 and len(state["refused"]) == 1 for state in in_order.values())
    # AND the shuffle mattered: applied as they arrived, some account would have ended elsewhere
    assert any(as_arrived[account] != in_order[account] for account in in_order)
    print(
        f"account_events e2e: serve {example.serve_seconds:.1f} s, deploy {example.deploy_seconds:.1f} s, "
        f"{len(events)} events in {time.monotonic() - started:.1f} s; drain {drained.get('records')} records"
    )
