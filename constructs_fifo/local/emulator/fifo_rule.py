"""The FIFO receive rule: which messages of an SQS FIFO queue one ReceiveMessage returns, in what order.

Every model of SQS in the project uses this one function: the emulator's receive
(:mod:`~constructs_fifo.local.emulator.patches.sqs_models`), the model queue of the model tests
(``tests/functional/fifo_model.py``) and so the chaos suite's queue, which is that model. It is pure
(no moto, no clock, no I/O): given a queue's messages in send order, with their group, the time each
becomes receivable and its receive count, it says which to receive and which SQS moves to the
dead-letter queue. The caller then marks them received as it models visibility.

The rule, from the AWS pages and from runs against real SQS (the observations win where they
disagree, and the rule says where):

1. **A group is served from its front, in order, while its messages are visible, up to the first
   one in flight.** Pages: FIFO-key-terms and FIFO-queues-understanding-logic ("messages within the
   same message group are processed one at a time, in strict order"); knowledge-center
   sqs-fifo-messages-not-returned ("Inflight messages block delivery of available messages within
   the same message group"; "You must delete the messages in the current message group ID before
   you can receive more messages within the same message group ID"). Read literally the pages say a
   group with *any* message in flight returns nothing. Observed on AWS: g1-m1 made visible again
   (ChangeMessageVisibility 0, or 1 s and waited) while g1-m2 stays in flight is returned
   (``[g2-m1, g1-m1]``); with one message's visibility extended, the group's visible front is
   returned (``[foo]`` or ``[foo, bar]``). **The observation wins**: an in-flight message blocks the
   messages *behind* it, not the ones in front of it. A delayed message (queue ``DelaySeconds``)
   blocks the same way: nothing behind it is returned before it.
2. **As many messages of one group as possible, then the next group.** Page: knowledge-center
   sqs-fifo-messages-not-returned ("SQS returns as many messages with the same message group ID as
   possible. The ReceiveMessage API call can also return messages from other available message
   groups").
3. **Groups in the order they last became available** (the rule inferred from the observations; no
   page states an order of groups). Observed on AWS: groups g1 (m1..m4), g2 and g3 sent in that
   order; g1 and g2 received with a visibility timeout; once it ends, the next receive returns
   ``[g3-m1, g1-m1..m4, g2-m1]`` (the emulator, which ordered groups by their oldest message, gave
   ``[g1-m1..m4, g2-m1, g3-m1]``); the same with ``VisibilityTimeout=0``: ``[g3-m1, g1-m1, g1-m2,
   g2-m1, g2-m2]``. Both are explained by ranking each group by the time its front message became
   (or becomes) receivable: its send time (plus the queue's delay) when it was never received, else
   the end of its last visibility timeout. g3 has been available since it was sent; g1 and g2 only
   since their timeout ended (at once with 0), which is later. Ties (g1 and g2 came back together)
   go by send order. "Ordered by when a group was last received, never-received groups first" explains
   the same two observations; the two differ only for groups received at different times with
   different timeouts, which no run has compared. The rank is the front's own: a group whose front
   was deleted ranks by its next message's time (when AWS re-ranks such a group is not observed).
4. **SQS's dead-letter rule** (page: sqs-dead-letter-queues): a message whose receive count
   reached ``maxReceiveCount`` is moved to the dead-letter queue by the receive that reaches it,
   instead of being returned; its group goes on behind it. Only messages the receive reaches move (a
   full batch stops the walk).

What this module does not model (docs/emulator.md, "what stays different"): the look-ahead limit of
120,000 messages (quotas-messages), throughput quotas, and the distribution of a real queue (a
receive on AWS may return fewer messages than are available).

Examples
--------
>>> m = [
...     QueuedMessage("g1", available_at_ms=500, received=True),   # g1-m1: back at 500
...     QueuedMessage("g1", available_at_ms=900, received=True),   # g1-m2: still in flight
...     QueuedMessage("g2", available_at_ms=100, received=False),  # g2-m1: sent at 100
... ]
>>> select(m, now_ms=600, count=10).receive
(2, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["QueuedMessage", "Selection", "select"]


@dataclass(frozen=True)
class QueuedMessage:
    """What the rule needs of one message; a queue passes them in send order.

    Attributes
    ----------
    group : str or None
        The MessageGroupId.
    available_at_ms : float
        When the message is (or was) receivable: its send time plus any delay while it was never
        received; the end of its visibility timeout once received (as ChangeMessageVisibility left
        it). Any clock works, in the unit of ``now_ms``.
    received : bool
        Whether it was ever received (then ``available_at_ms`` in the future means *in flight*,
        before it means *delayed*; both block the group behind it).
    receive_count : int
        Its ApproximateReceiveCount.
    """

    group: str | None
    available_at_ms: float
    received: bool = False
    receive_count: int = 0


@dataclass(frozen=True)
class Selection:
    """One receive's answer: positions in the list given to :func:`select`.

    Attributes
    ----------
    receive : tuple of int
        The messages to return, in the order to return them.
    dead_letter : tuple of int
        The messages SQS moves to the dead-letter queue in this receive (rule 4).
    """

    receive: tuple[int, ...]
    dead_letter: tuple[int, ...] = ()


def select(
    messages: Sequence[QueuedMessage], *, now_ms: float, count: int, max_receive_count: int | None = None
) -> Selection:
    """Apply the FIFO receive rule (module docstring) to ``messages``, given in send order.

    Parameters
    ----------
    messages : sequence of QueuedMessage
        The queue's messages, oldest send first.
    now_ms : float
        The time of the receive, on the clock of ``available_at_ms``.
    count : int
        MaxNumberOfMessages (the event source mapping's batch size).
    max_receive_count : int, optional
        The redrive policy's ``maxReceiveCount``; ``None`` when the queue has no dead-letter queue.
    """
    chains: dict[str | None, list[int]] = {}
    blocked: set[str | None] = set()
    for index, message in enumerate(messages):
        group = message.group
        if group in blocked:
            continue
        if message.available_at_ms > now_ms:  # in flight or delayed: blocks what is behind it
            blocked.add(group)
            continue
        chains.setdefault(group, []).append(index)

    def rank(group: str | None) -> tuple[float, int]:
        front = chains[group][0]
        return (messages[front].available_at_ms, front)

    receive: list[int] = []
    dead_letter: list[int] = []
    for group in sorted(chains, key=rank):
        for index in chains[group]:
            if len(receive) >= count:
                return Selection(tuple(receive), tuple(dead_letter))
            if max_receive_count is not None and messages[index].receive_count >= max_receive_count:
                dead_letter.append(index)
                continue
            receive.append(index)
    return Selection(tuple(receive), tuple(dead_letter))
