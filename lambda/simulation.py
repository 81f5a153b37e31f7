"""Failures a demo job may ask for in its payload, shared by the sample's two job functions.

``{"simulate": {"fail_attempts": n}}`` fails attempts 1 to n with :class:`SimulatedFailureError`
(transient: the runtime retries it, and it succeeds on attempt n + 1); ``{"simulate": "poison"}``
raises :class:`~constructs_fifo.runtime.PermanentJobError` (dead at once). ``job.attempt`` is the
runtime's own count of runs, so "fails until its last attempt" is ``fail_attempts = max_attempts - 1``.

Only demos and tests send these payloads; a real job function has no such switch.
"""

from __future__ import annotations

from constructs_fifo.runtime import Job, PermanentJobError

__all__ = ["SIMULATE", "SimulatedFailureError", "simulate_failure"]

#: The payload key with which a job asks to fail.
SIMULATE = "simulate"


class SimulatedFailureError(RuntimeError):
    """A transient failure the payload asked for (``simulate.fail_attempts``)."""


def simulate_failure(job: Job) -> None:
    """Raise what ``job``'s payload asks for on this attempt; return when it asks for nothing.

    Raises
    ------
    PermanentJobError
        ``{"simulate": "poison"}``.
    SimulatedFailureError
        ``{"simulate": {"fail_attempts": n}}`` and ``job.attempt`` is at most ``n``.
    """
    payload = job.payload if isinstance(job.payload, dict) else {}
    simulate = payload.get(SIMULATE)
    if simulate == "poison":
        raise PermanentJobError(f"job {job.id!r} is poison (payload.simulate='poison')")
    if isinstance(simulate, dict):
        fail_attempts = int(simulate.get("fail_attempts", 0))
        if job.attempt <= fail_attempts:
            raise SimulatedFailureError(
                f"job {job.id!r} attempt {job.attempt} fails on purpose "
                f"(payload.simulate.fail_attempts={fail_attempts})"
            )
