"""The worker's errors: one base, each message naming the value, the rule and the fix."""

from __future__ import annotations

__all__ = ["WorkerConfigError", "WorkerError"]


class WorkerError(Exception):
    """Base of every error the worker raises."""


class WorkerConfigError(WorkerError):
    """The worker's settings cannot keep a job's records in flight (the message names the fix)."""
