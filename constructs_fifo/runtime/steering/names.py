"""The names steering writes where the runtime already reads (docs/steering.md), each defined once: the
claim item's attributes in claim mode, the state item's in state mode, the metrics, the envelope's
supersede key. A queue that never steers pays nothing for them."""

from __future__ import annotations

from typing import Final

__all__ = [
    "ATTR_CANCELLED_BY",
    "ATTR_CANCELLED_RUNNING",
    "ATTR_CANCEL_REASON",
    "ENVELOPE_SUPERSEDE",
    "MAX_CANCELLED_IDS",
    "MAX_CANCEL_REASON_LENGTH",
    "MAX_SUPERSEDE_KEYS",
    "MAX_SUPERSEDE_RECENT",
    "METRIC_JOBS_CANCELLED",
    "METRIC_JOBS_PACED",
    "METRIC_JOBS_SUPERSEDED",
    "METRIC_PACE_DELAY_SECONDS",
    "STATE_ATTR_CANCELLED",
    "STATE_ATTR_SUPERSEDE",
    "STATUS_CANCELLED",
    "STEERING_METRICS",
    "SUPERSEDED_BY",
    "SUPERSEDED_REASON_PREFIX",
    "SUPERSEDE_KEY_PREFIX",
]

#: The job was cancelled: no attempt runs after the cancel, and a running attempt's writes are refused.
STATUS_CANCELLED: Final = "CANCELLED"
#: On a CANCELLED claim: the reason the canceller gave (at most ``MAX_CANCEL_REASON_LENGTH`` characters).
ATTR_CANCEL_REASON: Final = "cancel_reason"
#: On a CANCELLED claim: who cancelled (the canceller's own words: a user, a session, a command).
ATTR_CANCELLED_BY: Final = "cancelled_by"
#: On a CANCELLED claim: ``True`` when an attempt held the claim (IN_FLIGHT) at the cancel: its effect
#: may have happened.
ATTR_CANCELLED_RUNNING: Final = "cancelled_running"
#: A cancel's reason and who are cut to this many characters each.
MAX_CANCEL_REASON_LENGTH: Final = 256
#: State mode: the state item's cancelled jobs (JSON ``[[id, at_ms, reason, by], ...]``).
STATE_ATTR_CANCELLED: Final = "cancelled"
#: State mode: cancelled job ids remembered per group (the oldest are forgotten first).
MAX_CANCELLED_IDS: Final = 100
#: State mode: the state item's supersede markers (JSON ``{key: newest job id}``), one per key whose
#: newest job is not applied yet (:mod:`constructs_fifo.runtime.state.storage.supersede`).
STATE_ATTR_SUPERSEDE: Final = "supersede"
#: State mode: supersede markers a group keeps at most (the oldest are forgotten first: an older job of
#: a forgotten key is applied, never skipped wrongly).
MAX_SUPERSEDE_KEYS: Final = 100
#: Claim mode: the job ids a supersede marker remembers (the key's last ones marked), so that
#: ``send_superseding(..., cancel_running=True)`` can stop the older one that is running.
MAX_SUPERSEDE_RECENT: Final = 8
#: One per job not run (or whose run's result was refused) because it was cancelled.
METRIC_JOBS_CANCELLED: Final = "JobsCancelled"
#: One per job skipped because a newer job of its group and supersede key was sent.
METRIC_JOBS_SUPERSEDED: Final = "JobsSuperseded"
#: One per record that waited for its pace key's next token (not run now, no attempt counted).
METRIC_JOBS_PACED: Final = "JobsPaced"
#: How long that record waits (seconds), one value per paced record.
METRIC_PACE_DELAY_SECONDS: Final = "PaceDelaySeconds"
#: The body's field naming a job's supersede key (``JobMessage.supersede``): within its group the newest
#: job of a key runs, older ones not started are skipped (both modes; docs/steering.md).
ENVELOPE_SUPERSEDE: Final = "supersede"
#: The claim table's item naming the newest job of (group, key): ``id`` = this prefix + group + "#" + key.
SUPERSEDE_KEY_PREFIX: Final = "supersede#"
#: ``cancelled_by`` of a job the runtime cancelled because a newer one of its key was sent.
SUPERSEDED_BY: Final = "supersede"
#: The ``cancel_reason`` of such a job: this prefix and the newer job's id.
SUPERSEDED_REASON_PREFIX: Final = "superseded by "
#: The metric of each steering outcome line's status, on a metrics line of its own written with it
#: (:func:`count`): every other outcome line stays as long as it was.
STEERING_METRICS: Final = {"CANCELLED": METRIC_JOBS_CANCELLED, "SUPERSEDED": METRIC_JOBS_SUPERSEDED}
