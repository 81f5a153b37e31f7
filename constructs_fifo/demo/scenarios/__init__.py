"""The demo's scenarios, one module each: the pipeline (the full workload, verified), its long builds on
container workers, the producer-order divergence, and seed 004's account events (core and run)."""

from __future__ import annotations

__all__: list[str] = []
