"""scenario_events.py: seed 004's account stories, the shuffled stream, the agent, and the verdict."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest

from constructs_fifo.demo.errors import DemoError
from constructs_fifo.demo.sample_app import JOB_CODE_DIR
from constructs_fifo.demo.scenarios.events import (
    REACTIVATED,
    SUSPENDED,
    USAGE,
    account_story,
    arrival_states,
    compare,
    event_stream,
    expected_states,
    load_account_agent,
)

#: The sample's job code, beside app.py: the agent's one definition.
CODE_DIR = Path(__file__).resolve().parents[4] / JOB_CODE_DIR
AGENT = load_account_agent(CODE_DIR)


def test_an_accounts_story_in_order_bills_the_active_usage_and_holds_the_suspended() -> None:
    # GIVEN seed 004's story WHEN applied in the order it happened
    story = account_story("acct-1")
    [state] = expected_states(story, AGENT).values()
    # THEN 10 + 7 units are billed, the 5 used while suspended are held, and the account is active
    assert [e.event_type for e in story] == [USAGE, SUSPENDED, USAGE, REACTIVATED, USAGE]
    assert [e.version for e in story] == [0, 1, 2, 3, 4]
    assert (state["status"], state["billed"], state["held"]) == ("active", 17, 5)
    assert state["actions"] == [
        "bill_usage:10",
        "send_dunning_email",
        "hold_usage:5",
        "restore_access",
        "bill_usage:7",
    ]


def test_the_stream_is_every_event_once_deterministic_and_out_of_order() -> None:
    # WHEN the stream of four accounts is drawn twice with one seed, and once with another
    first, again, other = event_stream(4, 4), event_stream(4, 4), event_stream(4, 5)
    # THEN it holds each account's five events once, the same order for the same seed
    assert sorted((e.account_id, e.version) for e in first) == sorted(
        (f"acct-s4-{a:03d}", v) for a in range(4) for v in range(5)
    )
    assert first == again
    assert first != other
    # AND some account's events are out of their story's order
    assert any(
        [e.version for e in first if e.account_id == account] != list(range(5))
        for account in {e.account_id for e in first}
    )


def test_applying_the_arrival_order_bills_wrong_and_the_comparison_says_so() -> None:
    # GIVEN an account whose suspension arrived after the usage it should have held
    story = account_story("acct-1")
    arrival = [story[0], story[2], story[1], story[3], story[4]]
    state = None
    for event in arrival:
        state = AGENT(event.event_type, event.detail(), state)
    # WHEN compared with the in-order state THEN it differs, billed 22 where 17 was right
    comparison = compare(story, {"acct-1": state}, AGENT)
    assert state is not None and state["billed"] == 22
    assert comparison.differing == comparison.wrongly_billed == ["acct-1"]
    assert not comparison.converged
    assert "1 of 1 accounts diverged" in comparison.verdict()
    # AND the in-order state itself converges
    assert compare(story, expected_states(story, AGENT), AGENT).converged


def test_arrival_states_apply_each_accounts_events_in_stream_order_and_ids_carry_the_seed() -> None:
    # GIVEN a shuffled stream
    stream = event_stream(4, seed=9)
    # WHEN the order-blind answer is computed
    blind = arrival_states(stream, AGENT)
    # THEN each account's actions follow the stream's order, not the story's
    for account, state in blind.items():
        types = [e.event_type for e in stream if e.account_id == account]
        assert len(state["actions"]) == len(types)
        assert [a.startswith(("bill_usage", "hold_usage")) for a in state["actions"]] == [
            t == USAGE for t in types
        ]
    # AND the accounts are named by the seed, so two seeds never share one
    assert {a.split("-")[1] for a in blind} == {"s9"}
    assert not set(blind) & {e.account_id for e in event_stream(4, seed=10)}


def test_the_agent_is_the_sample_job_codes_own_function() -> None:
    # GIVEN the sample's accounts job code, imported as the function's asset holds it
    spec = importlib.util.spec_from_file_location("accounts_under_test", CODE_DIR / "accounts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # WHEN the scenario loads its agent THEN it is that code: same file, same source, same answers
    assert inspect.getsourcefile(AGENT) == str(CODE_DIR / "accounts.py")
    assert inspect.getsource(AGENT) == inspect.getsource(module.apply_account_event)
    story = account_story("acct-1")
    assert arrival_states(story, AGENT) == arrival_states(story, module.apply_account_event)


def test_a_directory_without_the_accounts_job_code_is_named_with_the_fix(tmp_path: Path) -> None:
    # WHEN the agent is loaded from a directory with no accounts.py
    with pytest.raises(DemoError) as missing:
        load_account_agent(tmp_path)
    # THEN the error names the path it looked at and how to point the demo at the sample app
    assert str(tmp_path / "accounts.py") in missing.value.message
    assert "--app-dir" in missing.value.fix


def test_accounts_job_code_without_the_agent_is_named_with_the_fix(tmp_path: Path) -> None:
    # GIVEN an accounts.py that defines no apply_account_event
    (tmp_path / "accounts.py").write_text("def apply_event(job, state):\n    return {}\n")
    # WHEN loaded THEN the error names the file and the function it needs
    with pytest.raises(DemoError) as missing:
        load_account_agent(tmp_path)
    assert "apply_account_event" in missing.value.message
    assert str(tmp_path / "accounts.py") in missing.value.message
