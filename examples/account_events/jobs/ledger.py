"""The account events example's job code: an account's ledger, changed by its events in order (state mode).

Events come from an EventBridge bus through ``EventBusIngress``: one message group per account (the
event's ``detail.accountId``), ``seq`` the account's ``detail.version`` (0, 1, 2, ... per account), the
job type the event's ``detail-type``, the payload its ``detail``. A classic bus keeps no order, so an
account's events may arrive in any order; the runtime applies them in ``seq`` order, holding an early
arrival until the gap before it closes. :func:`apply_account_event` is pure, so the state it converges
to is the state the events give in the order they happened.

Order decides the outcome here: a withdrawal is refused while the account is frozen, or when the
balance does not cover it, and a refused withdrawal is recorded, not applied.

Examples
--------
>>> state = apply_account_event("account.opened", {}, None)
>>> state = apply_account_event("funds.deposited", {"amount": 50}, state)
>>> apply_account_event("funds.withdrawn", {"amount": 80}, state)["refused"]
[{'amount': 80, 'reason': 'insufficient funds'}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from constructs_fifo.runtime import Job, PermanentJobError

__all__ = [
    "DEPOSITED",
    "EVENT_TYPES",
    "FROZEN",
    "OPENED",
    "UNFROZEN",
    "WITHDRAWN",
    "apply_account_event",
    "apply_event",
]

OPENED = "account.opened"
DEPOSITED = "funds.deposited"
WITHDRAWN = "funds.withdrawn"
FROZEN = "account.frozen"
UNFROZEN = "account.unfrozen"
EVENT_TYPES = (OPENED, DEPOSITED, WITHDRAWN, FROZEN, UNFROZEN)


def apply_account_event(
    event_type: str, payload: Mapping[str, Any], state: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The account's next state after one event (``state`` is not changed; ``None`` before the first)."""
    if event_type not in EVENT_TYPES:
        raise PermanentJobError(f"unknown account event {event_type!r}: one of {', '.join(EVENT_TYPES)}")
    current = dict(state or {"status": "new", "balance": 0, "refused": []})
    refused = list(current["refused"])
    amount = int(payload.get("amount", 0))
    if event_type == OPENED:
        current["status"] = "open"
    elif event_type == FROZEN:
        current["status"] = "frozen"
    elif event_type == UNFROZEN:
        current["status"] = "open"
    elif event_type == DEPOSITED:
        current["balance"] = int(current["balance"]) + amount
    elif current["status"] != "open":
        refused.append({"amount": amount, "reason": f"account {current['status']}"})
    elif amount > int(current["balance"]):
        refused.append({"amount": amount, "reason": "insufficient funds"})
    else:
        current["balance"] = int(current["balance"]) - amount
    current["refused"] = refused
    return current


def apply_event(job: Job, state: Mapping[str, Any] | None) -> dict[str, Any]:
    """The state-mode transition: ``job`` (an account event) applied to the account's ``state``."""
    payload = job.payload if isinstance(job.payload, Mapping) else {}
    return apply_account_event(job.type, payload, state)
