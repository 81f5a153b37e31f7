"""The FIFO receive rule (``constructs_fifo/local/emulator/fifo_rule.py``), on the observations it states."""

from __future__ import annotations

from constructs_fifo.local.emulator.fifo_rule import QueuedMessage, select

NOW_MS = 10_000.0


def _sent(group: str, at_ms: float) -> QueuedMessage:
    return QueuedMessage(group, at_ms)


def _received(group: str, visible_at_ms: float, count: int = 1) -> QueuedMessage:
    return QueuedMessage(group, visible_at_ms, received=True, receive_count=count)


def test_a_front_visible_again_is_returned_while_a_later_message_of_its_group_is_in_flight() -> None:
    # GIVEN g1-m1 visible again (at 9,000), g1-m2 still in flight, and g2-m1 sent at 5,000
    messages = [_received("g1", 9_000), _received("g1", 20_000), _sent("g2", 5_000)]
    # WHEN a receive asks for 10
    selection = select(messages, now_ms=NOW_MS, count=10)
    # THEN g2-m1 (available longer) then g1-m1; never g1-m2
    assert selection.receive == (2, 0)


def test_a_group_is_served_up_to_its_first_message_in_flight_or_delayed() -> None:
    # GIVEN g: m1 m2 visible, m3 in flight, m4 visible; h: a delayed message, then a visible one
    messages = [
        _received("g", 1_000),
        _received("g", 1_000),
        _received("g", 50_000),
        _sent("g", 2_000),
        _sent("h", 60_000),
        _sent("h", 3_000),
    ]
    # WHEN received THEN g's front up to m3 comes, and nothing of h (its front is delayed)
    assert select(messages, now_ms=NOW_MS, count=10).receive == (0, 1)


def test_groups_come_in_the_order_they_last_became_available() -> None:
    # GIVEN g1 (4 messages) and g2 back from a timeout that ended at 8,000, and g3 sent at 3,000
    messages = [*[_received("g1", 8_000)] * 4, _received("g2", 8_000), _sent("g3", 3_000)]
    # WHEN received THEN g3 first, then g1 and g2 in their send order (AWS: [g3-m1, g1-m1..m4, g2-m1])
    assert select(messages, now_ms=NOW_MS, count=10).receive == (5, 0, 1, 2, 3, 4)


def test_a_batch_takes_as_many_of_one_group_as_possible_and_stops_at_count() -> None:
    # GIVEN a1 b1 a2 a3 sent in that order
    messages = [_sent("a", 1), _sent("b", 2), _sent("a", 3), _sent("a", 4)]
    # WHEN received THEN a's three messages first, then b's; a batch of 2 stops inside a
    assert select(messages, now_ms=NOW_MS, count=10).receive == (0, 2, 3, 1)
    assert select(messages, now_ms=NOW_MS, count=2).receive == (0, 2)


def test_a_message_at_max_receive_count_is_dead_lettered_by_the_receive_that_reaches_it() -> None:
    # GIVEN a group whose front was received 3 times, maxReceiveCount 3, and a later message
    messages = [_received("g", 1_000, count=3), _received("g", 1_000, count=1), _sent("h", 2_000)]
    # WHEN a receive of 1 reaches the front
    selection = select(messages, now_ms=NOW_MS, count=1, max_receive_count=3)
    # THEN the front moves to the dead-letter queue and its group goes on behind it
    assert selection.dead_letter == (0,)
    assert selection.receive == (1,)
