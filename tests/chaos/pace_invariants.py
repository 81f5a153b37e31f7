"""What pacing promises under chaos (docs/steering.md, "Pace a key"), checked on a settled paced world.

- **Never faster than the limit.** A run's start is the taking of its token (docs/steering.md), so the
  bound is checked on every take that took effect (:class:`.pace_world.Take`: a crashed run's, a lost
  response's, a duplicate's, a cancelled job's token is spent, never given back): of one key value's
  takes in the order the bucket took them, the tokens of takes ``i..j`` number at most
  ``burst + (c_j - c_i + pause_i) / I``, where ``c`` is the world's clock at a take's write, ``I`` the
  interval as the docs round it (``per / jobs`` rounded **up** to a millisecond: at most
  ``burst + jobs / per × T``), and ``pause_i`` how far the clock moved between the moment take ``i``'s
  worker last left a point of its own (the take read its clock then or later) and the write: a paused
  taker is a taker whose clock is behind (the docs' skew, one-sided). The world has one clock.
- **No run without its token.** Claim mode: the ``m``-th run of a key value by one invocation (a worker
  slot's batch) starts after that invocation took ``m`` tokens of it (each run, a retry's and a replay's
  too, takes its own, before its claim). State mode: the ``m``-th job of a key value to start its first
  run does so after ``m`` tokens of it were taken by any worker (a token is taken when a record arrives,
  a buffered ``seq`` job and a resumed group's replay run later without another).
- **A paced wait costs no attempt.** Claim mode: no claim counts more attempts than its claim was taken
  since its count was last reset (a ``PACED`` return does not touch the claim); with claim mode's
  ``deaths`` (a job is declared dead only after ``max_attempts`` takes of its own) no job dies
  ``ATTEMPTS_EXHAUSTED`` for being paced. State mode: :mod:`.state_invariants`' ``deaths`` (a job is
  exhausted only when ``max_attempts`` workers ran or marked it; a paced record is neither).
- **Never dead-lettered for being paced.** SQS's own rule (``maxReceiveCount`` 1000, the construct's for
  a paced queue) never fires (:func:`.invariants.common`); the runtime's dead-letters are each mode's.

Order, nothing lost and once are each mode's invariants; the controls' are :mod:`.steering_invariants`.
"""

from __future__ import annotations

from collections import defaultdict

from .claim_world import NO_CLAIM
from .history import Run
from .pace_world import Paced, Take, interval_ms

#: A take's clock is read in whole milliseconds (``int(clock × 1000)``): one of slack.
_MS_SLACK = 1.0


def check(world: Paced) -> list[str]:
    """Every violation of the module's invariants."""
    return [*bound(world), *tokens(world), *attempts(world)]


def _by_key(takes: list[Take]) -> dict[str, list[Take]]:
    found: dict[str, list[Take]] = defaultdict(list)
    for take in sorted(takes, key=lambda t: t.time):
        found[take.key].append(take)
    return found


def bound(world: Paced) -> list[str]:
    limit = world.limit
    interval = interval_ms(limit)
    found: list[str] = []
    for key, takes in _by_key(world.takes).items():
        for i, first in enumerate(takes):
            count = 0.0
            for last in takes[i:]:
                count += last.tokens
                window_ms = (last.clock - first.read_after) * 1000 + _MS_SLACK
                allowed = limit.burst + window_ms / interval
                if count > allowed + 1e-9:
                    found.append(
                        f"pace key {key!r}: {count:g} tokens taken from {first.clock:.3f} (read after "
                        f"{first.read_after:.3f}) to {last.clock:.3f}, more than burst {limit.burst} + "
                        f"{window_ms:.0f} ms / {interval} ms = {allowed:.3f} ({limit})"
                    )
                    break
    return found


def tokens(world: Paced) -> list[str]:
    if world.has_claims:
        return _claim_tokens(world)
    return _state_tokens(world)


def _claim_tokens(world: Paced) -> list[str]:
    """Claim mode: each invocation's ``m``-th run of a key value started after its ``m``-th token."""
    found: list[str] = []
    taken: dict[tuple[str, str], list[int]] = defaultdict(list)  # (worker, key) -> tick of each token
    for take in world.takes:
        taken[(take.worker, take.key)] += [take.time] * round(take.tokens)
    runs: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in world.history.runs:
        runs[(run.worker, world.key_of(world.workload.spec(run.job_id)))].append(run)
    for (worker, key), mine in runs.items():
        ticks = taken[(worker, key)]
        for number, run in enumerate(sorted(mine, key=lambda r: r.start)):
            if number >= len(ticks) or ticks[number] > run.start:
                found.append(
                    f"{run.job_id}'s run by {worker} at {run.start} had no token of pace key {key!r} "
                    f"(run {number + 1} of the key there; tokens taken at {ticks})"
                )
                break
    return found


def _state_tokens(world: Paced) -> list[str]:
    """State mode: the ``m``-th job of a key value to start started after ``m`` tokens were taken."""
    found: list[str] = []
    firsts: dict[str, list[Run]] = defaultdict(list)
    seen: set[str] = set()
    for run in sorted(world.history.runs, key=lambda r: r.start):
        if run.job_id not in seen:
            seen.add(run.job_id)
            firsts[world.key_of(world.workload.spec(run.job_id))].append(run)
    by_key = _by_key(world.takes)
    for key, runs in firsts.items():
        ticks = [take.time for take in by_key.get(key, []) for _ in range(round(take.tokens))]
        for number, run in enumerate(runs):
            if number >= len(ticks) or ticks[number] > run.start:
                found.append(
                    f"{run.job_id} started at {run.start} with no token: job {number + 1} of pace key "
                    f"{key!r} to run, {sum(t < run.start for t in ticks)} tokens taken before it"
                )
                break
    return found


def attempts(world: Paced) -> list[str]:
    """Claim mode: a claim never counts more attempts than it was taken since its count was reset."""
    if not world.has_claims:
        return []
    found: list[str] = []
    taken: dict[str, int] = defaultdict(int)
    for seen in world.history.claims:
        if seen.status == NO_CLAIM or seen.attempts == 0:
            taken[seen.job_id] = 0
            continue
        if seen.operation == "PutItem" and seen.status == "IN_FLIGHT":
            taken[seen.job_id] += 1
        if seen.attempts > taken[seen.job_id]:
            found.append(
                f"{seen.job_id}'s claim counts {seen.attempts} attempts after {taken[seen.job_id]} takes "
                f"(seen at {seen.time}, {seen.status} by {seen.worker}): a wait counted as an attempt"
            )
    return found
