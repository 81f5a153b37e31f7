"""The invariants both modes share, checked on a settled world (each returns violations)."""

from __future__ import annotations

from .world import ChaosWorld


def common(world: ChaosWorld) -> list[str]:
    """SQS's own rule never fired, nothing escaped the processor, nothing is left on the queue."""
    found = [f"SQS's maxReceiveCount dead-lettered {m.message_id} ({m.body})" for m in world.sqs_dead()]
    found += [f"{name}: {type(exc).__name__} escaped process(): {exc}" for name, exc in world.history.escaped]
    found += [f"left on the queue: {m.message_id} ({m.body})" for m in world.model.messages]
    return found
