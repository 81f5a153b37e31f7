"""ECS task scale-in protection while a slot runs a job, so scale-in never stops a running job.

The ECS agent's endpoint (``PUT $ECS_AGENT_URI/task-protection/v1/state`` with
``{"ProtectionEnabled": true, "ExpiresInMinutes": N}``, AWS: task-scale-in-protection) protects the
task when its first slot becomes busy and releases it (``{"ProtectionEnabled": false}``) when its last
slot goes idle; the worker refreshes it every half of ``N`` while a slot stays busy, because the
protection expires. Without ``ECS_AGENT_URI`` (a laptop, a test) every call is a no-op. A failed
request is logged, never raised: the job runs either way.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any, Final

__all__ = ["DEFAULT_PROTECTION_MINUTES", "ENV_ECS_AGENT_URI", "ScaleInProtection"]

#: The variable the ECS agent sets in every task's containers.
ENV_ECS_AGENT_URI: Final = "ECS_AGENT_URI"
#: How long one protection request holds (refreshed at half of it while a slot is busy).
DEFAULT_PROTECTION_MINUTES: Final = 60
#: The agent's limit on ``ExpiresInMinutes`` (48 hours).
MAX_PROTECTION_MINUTES: Final = 2880
_PATH: Final = "/task-protection/v1/state"
_TIMEOUT_SECONDS: Final = 5


class ScaleInProtection:
    """Counts busy slots and keeps the task protected while any is busy.

    Parameters
    ----------
    agent_uri : str or None
        ``$ECS_AGENT_URI``; ``None`` or empty: every call is a no-op.
    on_event : Callable[[dict], None]
        Where a failed request (and each change) is written.
    expires_in_minutes : int
        ``ExpiresInMinutes`` of each request (1 to 2880).
    monotonic : Callable[[], float]
        The refresh clock.
    """

    def __init__(
        self,
        agent_uri: str | None,
        *,
        on_event: Callable[[dict[str, Any]], None],
        expires_in_minutes: int = DEFAULT_PROTECTION_MINUTES,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = f"{agent_uri.rstrip('/')}{_PATH}" if agent_uri else None
        self._on_event = on_event
        self._minutes = max(1, min(MAX_PROTECTION_MINUTES, expires_in_minutes))
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._busy = 0
        self._put_at: float | None = None

    @property
    def busy(self) -> int:
        """Slots running a batch now."""
        return self._busy

    def acquire(self) -> int:
        """A slot starts a batch: protect the task if it was idle; return the busy slots."""
        with self._lock:
            self._busy += 1
            if self._busy == 1:
                self._put(enabled=True)
            return self._busy

    def release(self) -> int:
        """A slot finished its batch: release the protection when no slot is busy; return the busy slots."""
        with self._lock:
            self._busy = max(0, self._busy - 1)
            if self._busy == 0:
                self._put(enabled=False)
            return self._busy

    def refresh(self) -> None:
        """Renew the protection when a slot is busy and half of its time went by."""
        with self._lock:
            if (
                self._busy
                and self._put_at is not None
                and self._monotonic() - self._put_at >= self._minutes * 30
            ):
                self._put(enabled=True)

    def _put(self, *, enabled: bool) -> None:
        self._put_at = self._monotonic() if enabled else None
        if self._url is None:
            return
        body: dict[str, Any] = {"ProtectionEnabled": enabled}
        if enabled:
            body["ExpiresInMinutes"] = self._minutes
        request = urllib.request.Request(
            self._url,
            data=json.dumps(body).encode(),
            method="PUT",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=_TIMEOUT_SECONDS) as response:
                response.read()
        except Exception as exc:  # the job runs either way; scale-in may stop it (it is retried)
            self._on_event(
                {
                    "event": "scale_in_protection_failed",
                    "protectionEnabled": enabled,
                    "error": f"{type(exc).__name__}: {exc}",
                    "action": "check the task role allows ecs:UpdateTaskProtection; the job runs unprotected",
                }
            )
