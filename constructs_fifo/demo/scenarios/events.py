"""The events scenario's core: seed 004's account events, shuffled on a classic bus, and what order does.

Seed 004's agent reacts to three account events and keeps one thing, the account's status:
``account.suspended`` (send the dunning email), ``account.reactivated`` (restore access) and
``usage.reported`` (bill the units while the account is active, hold them while it is suspended).
Each account's story here is the seed's bug in five events, in the order they happened:

``usage 10 -> suspended -> usage 5 -> reactivated -> usage 7``: 17 units billed, 5 held.

A classic EventBridge bus orders nothing, and neither does the standard staging queue behind its rule
(facts.md, "Getting events in"): the producer publishes each account's events in a shuffled order
(:func:`event_stream`, seeded), the pipe groups them by account, and FIFO keeps the order they arrived
in. Without ``seq`` the agent applies that order and bills the wrong units; with ``seq`` (the event's
``version``, mapped by the pipe's input template) state mode's reorder buffer applies each account's
events in the order they happened, and every account converges to :func:`expected_states`.

Pure: the stream, what the agent ends with in the order the events happened
(:func:`expected_states`) and in the order they arrived (:func:`arrival_states`), and the verdict
(:func:`compare`); the pipeline that carries the events is the caller's (the functional test deploys
a rule, a staging queue, a pipe and a state-mode FIFO queue; ``constructs-fifo demo --scenario
events``, :mod:`~constructs_fifo.demo.scenarios.events_run`, runs the sample app's ``Accounts``
queue and its bus).

The agent itself is the sample's job code, ``apply_account_event`` of ``lambda/accounts.py``: the one
definition, the one the deployed function runs. It lives there because the function's asset holds
the job code and the runtime but not this package; :func:`load_account_agent` loads it from the
sample app's code directory, and the functions here take it as ``agent``, so the demo's expected
states are the job code's by construction.
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

from constructs_fifo.demo.errors import DemoError
from constructs_fifo.demo.sample_app import ACCOUNT_EVENT_SOURCE, ACCOUNT_HANDLER

__all__ = [
    "AGENT_FUNCTION",
    "EVENT_SOURCE",
    "REACTIVATED",
    "SUSPENDED",
    "USAGE",
    "AccountAgent",
    "AccountEvent",
    "EventsComparison",
    "account_story",
    "arrival_states",
    "compare",
    "event_stream",
    "expected_states",
    "load_account_agent",
]

#: The events' ``source`` (the rule's event pattern matches it).
EVENT_SOURCE: Final = ACCOUNT_EVENT_SOURCE
SUSPENDED: Final = "account.suspended"
REACTIVATED: Final = "account.reactivated"
USAGE: Final = "usage.reported"
#: Seed 004's story, in the order it happened: (type, units).
_STORY: Final = ((USAGE, 10), (SUSPENDED, 0), (USAGE, 5), (REACTIVATED, 0), (USAGE, 7))
#: The agent's function in the accounts job code (beside the state-mode handler it wraps).
AGENT_FUNCTION: Final = "apply_account_event"

#: The agent: ``(event_type, payload, state or None) -> next state`` (``state`` is not changed).
AccountAgent = Callable[[str, Mapping[str, Any], Mapping[str, Any] | None], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class AccountEvent:
    """One event of an account; ``version`` is its position in the account's story (``seq``, from 0)."""

    account_id: str
    version: int
    event_type: str
    units: int = 0

    @property
    def event_id(self) -> str:
        """Stable per account and version, so the job id (and the dedup id) are too."""
        return f"{self.account_id}-v{self.version}"

    def detail(self) -> dict[str, Any]:
        """The event's ``detail``: what the pipe's paths read."""
        detail: dict[str, Any] = {
            "eventId": self.event_id,
            "accountId": self.account_id,
            "version": self.version,
            "type": self.event_type,
        }
        if self.event_type == USAGE:
            detail["units"] = self.units
        return detail


def account_story(account_id: str) -> tuple[AccountEvent, ...]:
    """The account's events in the order they happened."""
    return tuple(
        AccountEvent(account_id, version, kind, units) for version, (kind, units) in enumerate(_STORY)
    )


def _out_of_order(events: Sequence[AccountEvent]) -> bool:
    last: dict[str, int] = {}
    for event in events:
        if event.version < last.get(event.account_id, -1):
            return True
        last[event.account_id] = event.version
    return False


def event_stream(accounts: int, seed: int) -> list[AccountEvent]:
    """Every account's story, shuffled into one publish order (deterministic for ``seed``), with at
    least one account out of order (a shuffle that kept every story in order is drawn again).

    The seed is part of every account id (``acct-s4-000``), so runs with different seeds on one
    deployment never share an account's state or an event's deduplication id."""
    events = [event for index in range(accounts) for event in account_story(f"acct-s{seed}-{index:03d}")]
    rng = random.Random(seed)
    while True:
        rng.shuffle(events)
        if _out_of_order(events):
            return list(events)


def load_account_agent(code_dir: Path) -> AccountAgent:
    """The account agent of the sample's job code in ``code_dir`` (``lambda/`` beside ``app.py``).

    Loaded from the file, as the function's asset holds it, without putting ``code_dir`` on
    ``sys.path`` or in ``sys.modules`` (the job code's module names are the asset's, not this process's).

    Raises
    ------
    DemoError
        ``code_dir`` holds no accounts job code, or it defines no agent.
    """
    module_name = ACCOUNT_HANDLER.partition(".")[0]
    path = Path(code_dir) / f"{module_name}.py"
    spec = importlib.util.spec_from_file_location(module_name, path) if path.is_file() else None
    if spec is None or spec.loader is None:
        raise DemoError(
            f"no accounts job code at {path}: the events scenario applies the sample's own agent "
            f"({AGENT_FUNCTION} of {module_name}.py) to compute each account's in-order state",
            "run the demo from the sample app's directory (the one holding app.py and lambda/), "
            "or pass --app-dir naming it",
        )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    agent = getattr(module, AGENT_FUNCTION, None)
    if not callable(agent):
        raise DemoError(
            f"{path} defines no function {AGENT_FUNCTION}: the events scenario computes each account's "
            "in-order state with it",
            f"restore {AGENT_FUNCTION}(event_type, payload, state) in {path} "
            "(the sample's lambda/accounts.py)",
        )
    return cast(AccountAgent, agent)


def expected_states(events: Sequence[AccountEvent], agent: AccountAgent) -> dict[str, dict[str, Any]]:
    """Each account's state when ``agent`` applies its events in the order they happened."""
    return arrival_states(sorted(events, key=lambda e: (e.account_id, e.version)), agent)


def arrival_states(events: Sequence[AccountEvent], agent: AccountAgent) -> dict[str, dict[str, Any]]:
    """Each account's state when ``agent`` applies its events in the order of ``events`` (the publish
    order): what a consumer that ignores ``seq`` ends with, since the pipe and the FIFO queue keep that
    order."""
    states: dict[str, dict[str, Any]] = {}
    for event in events:
        states[event.account_id] = agent(event.event_type, event.detail(), states.get(event.account_id))
    return states


@dataclass(frozen=True)
class EventsComparison:
    """The states a run left, against the in-order ones: which accounts differ."""

    expected: Mapping[str, Mapping[str, Any]]
    observed: Mapping[str, Mapping[str, Any] | None]

    @property
    def differing(self) -> list[str]:
        """Accounts whose state is not the in-order one (missing counts as differing)."""
        return sorted(a for a, state in self.expected.items() if self.observed.get(a) != state)

    @property
    def converged(self) -> bool:
        return not self.differing

    @property
    def wrongly_billed(self) -> list[str]:
        """Accounts billed other units than the in-order story bills (the seed's bug)."""
        return sorted(
            a
            for a, state in self.expected.items()
            if (self.observed.get(a) or {}).get("billed") != state.get("billed")
        )

    def verdict(self) -> str:
        if self.converged:
            return f"all {len(self.expected)} accounts converged to the in-order state"
        return (
            f"{len(self.differing)} of {len(self.expected)} accounts diverged from the in-order state "
            f"({len(self.wrongly_billed)} billed wrong units)"
        )


def compare(
    events: Sequence[AccountEvent], observed: Mapping[str, Mapping[str, Any] | None], agent: AccountAgent
) -> EventsComparison:
    """Compare the states a run left with the in-order states ``agent`` gives ``events``."""
    return EventsComparison(expected_states(events, agent), observed)
