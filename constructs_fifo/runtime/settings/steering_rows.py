"""The steering rows of the settings spec: the controls set on the construct (docs/steering.md).

Rows of :data:`constructs_fifo.runtime.settings.spec.SETTINGS` like any other (the spec places them after
the consumer's, in the construct's keyword order); written apart so the spec stays one readable module.
Standard library only, as the spec.
"""

from __future__ import annotations

from typing import Final

from constructs_fifo.runtime.settings.row import Setting

__all__ = ["STEERING_ROWS"]

STEERING_ROWS: Final = (
    Setting(
        "pace",
        "at most `jobs` runs per `per` (with a `burst`) for each value of `key`: `group`, or a key that "
        "spans groups (`body:payload.tenant`, `attribute:<name>`); over it a job waits in its place, no "
        'attempt counted (see "Pace a key" in docs/steering.md)',
        "Pace | None",
        default_doc="none: not paced",
        prop="pace",
        env="CONSTRUCTS_FIFO_PACE",
        field="pace",
        rule="`jobs` and `burst` 1–100000, `per` 1 s – 1 day; with it `max_receive_count` defaults to 1000",
    ),
)
