"""Sample job code: seed 004's account agent, a state changed by account events (state mode).

The accounts queue runs in state mode (handler ``accounts.apply_event``). Its jobs come from an
EventBridge bus through the construct's ``EventBusIngress`` (rule, staging queue, pipe): one message
group per account (the event's ``detail.accountId``), ``seq`` the account's ``detail.version``, the job
type the event's ``detail-type`` and the payload its ``detail``. The runtime applies an account's jobs
in ``seq`` order, whatever order the bus and the staging queue delivered them in.

The agent keeps the account's status and reacts to three events: ``account.suspended`` (send the
dunning email), ``account.reactivated`` (restore access), ``usage.reported`` (bill the units while
the account is active, hold them while it is suspended). The order decides what is billed, which is
the point of the demo.

:func:`apply_account_event` is the agent's one definition: the demo's events scenario loads it from
this file to compute each account's in-order state (this code ships without the demo's package, so
the demo reaches it, not the other way round).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from constructs_fifo.runtime import Job, PermanentJobError

__all__ = ["EVENT_TYPES", "REACTIVATED", "SUSPENDED", "USAGE", "apply_account_event", "apply_event"]

SUSPENDED = "account.suspended"
REACTIVATED = "account.reactivated"
USAGE = "usage.reported"
EVENT_TYPES = (SUSPENDED, REACTIVATED, USAGE)
_ACTIVE = "active"


def apply_account_event(
    event_type: str, payload: Mapping[str, Any], state: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The account's next state after one event (``state`` is not changed; ``None`` before the first)."""
    current = dict(state or {"status": _ACTIVE, "billed": 0, "held": 0, "actions": []})
    actions = list(current.get("actions", []))
    if event_type == SUSPENDED:
        current["status"] = "suspended"
        actions.append("send_dunning_email")
    elif event_type == REACTIVATED:
        current["status"] = _ACTIVE
        actions.append("restore_access")
    elif event_type == USAGE:
        units = int(payload.get("units", 0))
        if current["status"] == _ACTIVE:
            current["billed"] = int(current.get("billed", 0)) + units
            actions.append(f"bill_usage:{units}")
        else:
            current["held"] = int(current.get("held", 0)) + units
            actions.append(f"hold_usage:{units}")
    current["actions"] = actions
    return current


def apply_event(job: Job, state: Mapping[str, Any] | None) -> dict[str, Any]:
    """The state-mode transition: ``job`` (an account event) applied to the account's ``state``.

    Raises
    ------
    PermanentJobError
        The job's type is not an account event: the job is dead at once (retrying cannot help).
    """
    if job.type not in EVENT_TYPES:
        raise PermanentJobError(
            f"job {job.id!r} has type {job.type!r}: the accounts agent handles {', '.join(EVENT_TYPES)}; "
            "publish the event with one of those detail-types."
        )
    payload = job.payload if isinstance(job.payload, dict) else {}
    return apply_account_event(job.type, payload, state)
