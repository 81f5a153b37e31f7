"""scenario_events.py: seed 004's account stories, the shuffled stream, the agent, and the verdict."""

from __future__ import annotations

from constructs_fifo.local.demo.scenario_events import (
    REACTIVATED,
    SUSPENDED,
    USAGE,
    account_story,
    apply_account_event,
    arrival_states,
    compare,
    event_stream,
    expected_states,
)


def test_an_accounts_story_in_order_bills_the_active_usage_and_holds_the_suspended() -> None:
    # GIVEN seed 004's story WHEN applied in the order it happened
    story = account_story("acct-1")
    [state] = expected_states(story).values()
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
        state = apply_account_event(event.event_type, event.detail(), state)
    # WHEN compared with the in-order state THEN it differs, billed 22 where 17 was right
    comparison = compare(story, {"acct-1": state})
    assert state is not None and state["billed"] == 22
    assert comparison.differing == comparison.wrongly_billed == ["acct-1"]
    assert not comparison.converged
    assert "1 of 1 accounts diverged" in comparison.verdict()
    # AND the in-order state itself converges
    assert compare(story, expected_states(story)).converged


def test_arrival_states_apply_each_accounts_events_in_stream_order_and_ids_carry_the_seed() -> None:
    # GIVEN a shuffled stream
    stream = event_stream(4, seed=9)
    # WHEN the order-blind answer is computed
    blind = arrival_states(stream)
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
