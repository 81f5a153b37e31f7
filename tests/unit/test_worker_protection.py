"""ECS task scale-in protection against a local http.server standing in for the ECS agent."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from constructs_fifo.worker.protection import ScaleInProtection


class _Agent(http.server.BaseHTTPRequestHandler):
    requests: ClassVar[list[tuple[str, str, dict[str, Any]]]] = []
    status = 200

    def do_PUT(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.requests.append(("PUT", self.path, json.loads(self.rfile.read(length))))
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:  # quiet
        pass


@pytest.fixture
def agent() -> Iterator[tuple[str, type[_Agent]]]:
    handler = type("Agent", (_Agent,), {"requests": [], "status": 200})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def test_the_task_is_protected_while_any_slot_is_busy(agent: tuple[str, type[_Agent]]) -> None:
    # GIVEN the protection of a task whose agent answers
    uri, handler = agent
    events: list[dict[str, Any]] = []
    protection = ScaleInProtection(uri, on_event=events.append, expires_in_minutes=30)
    # WHEN two slots start a batch, then both finish
    busy = [protection.acquire(), protection.acquire(), protection.release(), protection.release()]
    # THEN it was enabled once on the first and released once on the last
    assert busy == [1, 2, 1, 0]
    assert handler.requests == [
        ("PUT", "/task-protection/v1/state", {"ProtectionEnabled": True, "ExpiresInMinutes": 30}),
        ("PUT", "/task-protection/v1/state", {"ProtectionEnabled": False}),
    ]
    assert events == []


def test_a_busy_task_refreshes_its_protection_at_half_its_time(agent: tuple[str, type[_Agent]]) -> None:
    # GIVEN a busy slot and a clock
    uri, handler = agent
    now = [0.0]
    protection = ScaleInProtection(
        uri, on_event=lambda _: None, expires_in_minutes=10, monotonic=lambda: now[0]
    )
    protection.acquire()
    # WHEN the worker refreshes before and after half of the 10 minutes
    now[0] = 299.0
    protection.refresh()
    now[0] = 300.0
    protection.refresh()
    # THEN only the second refresh asked again
    assert [body for _, _, body in handler.requests] == [
        {"ProtectionEnabled": True, "ExpiresInMinutes": 10},
        {"ProtectionEnabled": True, "ExpiresInMinutes": 10},
    ]


def test_an_agent_error_is_logged_and_never_raised(agent: tuple[str, type[_Agent]]) -> None:
    # GIVEN an agent that refuses (e.g. the task role lacks ecs:UpdateTaskProtection)
    uri, handler = agent
    handler.status = 400
    events: list[dict[str, Any]] = []
    protection = ScaleInProtection(uri, on_event=events.append)
    # WHEN a slot starts a batch
    protection.acquire()
    # THEN the failure is one event with its fix
    assert [e["event"] for e in events] == ["scale_in_protection_failed"]
    assert "ecs:UpdateTaskProtection" in events[0]["action"]


def test_without_an_agent_every_call_is_a_no_op() -> None:
    # GIVEN no ECS_AGENT_URI (a laptop)
    events: list[dict[str, Any]] = []
    protection = ScaleInProtection(None, on_event=events.append)
    # WHEN slots come and go
    counts = [protection.acquire(), protection.release()]
    # THEN it only counts
    assert counts == [1, 0]
    assert events == []
