"""A crash is counted against the job that caused it only: the worker's gate for runs alone.

A worker's slots run their jobs in one process, so when it dies (a job's segfault, its out-of-memory,
its ``os._exit``) every running job's lease runs out together, and nothing says which job killed it.
The rule (stated once in docs/architecture.md, *The container worker*):

1. A run that shares its process with other jobs' runs is claimed ``shared``; its lease running out
   is **not** counted as an attempt (:mod:`constructs_fifo.runtime.claim.store`, rule 7).
2. A job whose last run's lease ran out (``Claim.after_crash``) runs **alone**: its slot waits until
   no other slot runs a job, no other slot starts one meanwhile (:class:`RunGate`: a waiting alone run
   goes first), then the claim loses ``shared`` (a fenced write) and the job runs. Its lease running
   out is counted: the process ran nothing else, so the crash was its own.

So a healthy job beside a crashing one loses no attempt (its run was shared), and runs alone next: no
slot-mate can crash it then. A job that crashes its worker on every run is counted from its second
run on (each alone) and dies after ``max_attempts`` counted runs. A worker of one slot is always alone:
it claims without ``shared`` and needs no gate.

What waiting costs: while an alone run waits or runs, the worker's other slots start nothing (their
running jobs finish first). A job that ignores ``context.cancelled`` past its stop holds the gate
until it returns.
"""

from __future__ import annotations

import threading

__all__ = ["RunGate"]


class RunGate:
    """Admits the jobs of a worker's slots: any number shared, or one alone (alone waiters first).

    A slot enters before its job's function runs and leaves when its claim is written. The blocking
    :meth:`enter` is the worker's; :meth:`try_enter` is the same rule without waiting (a model test
    steps it). A slot that asks to run alone is queued (:meth:`ask_alone`) so that no shared run starts
    while it waits: without that a busy worker would never be free of shared runs.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._shared = 0
        self._alone = False
        self._waiting_alone = 0

    def ask_alone(self) -> None:
        """Queue an alone run: no shared run starts from now until it entered (or :meth:`cancel_alone`)."""
        with self._changed:
            self._waiting_alone += 1

    def cancel_alone(self) -> None:
        """Withdraw a queued alone run that will not enter."""
        with self._changed:
            self._waiting_alone = max(0, self._waiting_alone - 1)
            self._changed.notify_all()

    def try_enter(self, *, alone: bool) -> bool:
        """Enter without waiting; ``False`` when the rule does not admit it now (alone: asked first)."""
        with self._changed:
            if alone:
                if self._alone or self._shared:
                    return False
                self._waiting_alone -= 1
                self._alone = True
                return True
            if self._alone or self._waiting_alone:
                return False
            self._shared += 1
            return True

    def enter(self, *, alone: bool) -> None:
        """Enter, waiting as long as the rule says (an alone run: until no other job runs)."""
        if alone:
            self.ask_alone()
        with self._changed:
            while not self.try_enter(alone=alone):
                self._changed.wait()

    def leave(self, *, alone: bool) -> None:
        """The job's run ended (its claim written, or its batch over)."""
        with self._changed:
            if alone:
                self._alone = False
            else:
                self._shared = max(0, self._shared - 1)
            self._changed.notify_all()

    @property
    def running(self) -> tuple[int, bool]:
        """(shared runs, whether an alone run runs): what the gate admitted and has not seen leave."""
        with self._changed:
            return self._shared, self._alone
