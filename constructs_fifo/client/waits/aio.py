"""The client's asyncio forms: boto3 in worker threads, the waits' pauses in the event loop.

An asyncio server (the MCP Python SDK's, an aiohttp or FastAPI app) must not block its event loop.
boto3 is blocking, so every AWS request here runs in a worker thread (:func:`asyncio.to_thread`, the
loop's default executor) and the loop goes on meanwhile. A wait is not one long blocking call in a
thread: each *read* runs in a thread and each *pause* is an ``asyncio.sleep``, so a hundred waiters
hold no thread while they pause (the default executor has only min(32, CPUs + 4) threads, and a
thread per waiter would exhaust it). A cancelled task stops at its next pause; a read already in its
thread finishes there and its answer is dropped.

Why not aioboto3 / aiobotocore: it would be a second AWS stack beside boto3 (its own pinned
botocore, its own clients to inject and stub), for requests that take milliseconds and a client whose
waits spend their time pausing, not reading. A thread per request in flight costs less than that
dependency; should a server's request rate make threads the bottleneck, that is the time to earn it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from constructs_fifo.client.job_status import ends_wait
from constructs_fifo.client.outcomes import DEFAULT_FIRST_POLL_SECONDS, DEFAULT_MAX_POLL_SECONDS, check_wait

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.client.job_status import JobOutcome
    from constructs_fifo.client.outcomes import JobOutcomes
    from constructs_fifo.client.waits.many import JobRefLike

__all__ = ["as_settled", "run_blocking", "wait", "wait_many"]

T = TypeVar("T")


async def run_blocking(call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)`` (a boto3 request) in a worker thread, the event loop free meanwhile."""
    return await asyncio.to_thread(call, *args, **kwargs)


async def wait(
    outcomes: JobOutcomes,
    job_id: str,
    timeout_seconds: float,
    *,
    group: str | None = None,
    seq: int | None = None,
    sent: bool = False,
    stop_at_parked: bool = False,
    first_poll_seconds: float = DEFAULT_FIRST_POLL_SECONDS,
    max_poll_seconds: float = DEFAULT_MAX_POLL_SECONDS,
) -> JobOutcome:
    """:meth:`JobOutcomes.wait` in the event loop: each read in a thread, each pause ``asyncio.sleep``.

    The timer is the event loop's (``loop.time()``); the reads, pauses and what ends the wait are
    ``wait``'s.
    """
    check_wait(timeout_seconds, first_poll_seconds, max_poll_seconds)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_seconds
    pause = first_poll_seconds
    while True:
        outcome = await run_blocking(outcomes.get, job_id, group, seq=seq, sent=sent)
        left = deadline - loop.time()
        if ends_wait(outcome.status, stop_at_parked=stop_at_parked) or left <= 0:
            return outcome
        await asyncio.sleep(min(pause, left))
        pause = min(pause * 2, max_poll_seconds)


async def as_settled(
    outcomes: JobOutcomes, jobs: Iterable[str | JobRefLike], timeout_seconds: float, **options: Any
) -> AsyncIterator[JobOutcome]:
    """:meth:`JobOutcomes.as_settled` as an async iterator: one ``BatchGetItem`` a poll, in a thread.

    ``options`` are ``as_settled``'s (``sent``, ``stop_at_parked``, the pauses). The waits' timer is
    the one ``outcomes`` was built with (``time.monotonic`` by default).
    """
    many = outcomes.start_many(jobs, timeout_seconds, **options)
    while True:
        for outcome in await run_blocking(many.poll):
            yield outcome
        if many.finished:
            return
        await asyncio.sleep(many.next_pause())


async def wait_many(
    outcomes: JobOutcomes, jobs: Iterable[str | JobRefLike], timeout_seconds: float, **options: Any
) -> dict[str, JobOutcome]:
    """:meth:`JobOutcomes.wait_many` in the event loop: every outcome by job id, in their order."""
    many = outcomes.start_many(jobs, timeout_seconds, **options)
    got: list[JobOutcome] = []
    while True:
        got += await run_blocking(many.poll)
        if many.finished:
            return many.in_order(got)
        await asyncio.sleep(many.next_pause())
