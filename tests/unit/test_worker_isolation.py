"""The worker's gate for runs alone: any number shared, or one alone, an alone waiter first."""

from __future__ import annotations

import threading

from constructs_fifo.worker.isolation import RunGate


def test_shared_runs_enter_together_and_an_alone_run_waits_for_them() -> None:
    # GIVEN two shared runs in the gate
    gate = RunGate()
    assert gate.try_enter(alone=False) and gate.try_enter(alone=False)
    # WHEN a run asks to run alone
    gate.ask_alone()
    # THEN it is not admitted while they run, and no new shared run starts meanwhile
    assert gate.try_enter(alone=True) is False
    assert gate.try_enter(alone=False) is False
    # AND once both left, it enters, and nothing else does until it leaves
    gate.leave(alone=False)
    gate.leave(alone=False)
    assert gate.try_enter(alone=True)
    assert gate.try_enter(alone=False) is False
    gate.leave(alone=True)
    assert gate.try_enter(alone=False)
    assert gate.running == (1, False)


def test_a_blocking_alone_run_enters_when_the_running_shared_run_leaves() -> None:
    # GIVEN a shared run in the gate, and a thread entering alone
    gate = RunGate()
    gate.enter(alone=False)
    entered = threading.Event()

    def alone() -> None:
        gate.enter(alone=True)
        entered.set()

    thread = threading.Thread(target=alone, daemon=True)
    thread.start()
    # WHEN the shared run leaves
    waited = not entered.wait(0.1)
    gate.leave(alone=False)
    # THEN the alone run entered only then
    assert waited
    assert entered.wait(5)
    assert gate.running == (0, True)
    thread.join(5)


def test_a_cancelled_alone_waiter_lets_shared_runs_in_again() -> None:
    # GIVEN an alone run queued, which then will not enter
    gate = RunGate()
    gate.ask_alone()
    assert gate.try_enter(alone=False) is False
    # WHEN it withdraws / THEN shared runs are admitted again
    gate.cancel_alone()
    assert gate.try_enter(alone=False)
