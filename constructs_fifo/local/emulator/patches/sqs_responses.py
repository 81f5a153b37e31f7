"""Fidelity patches of moto's SQS responses: request parsing only (``moto/sqs/responses.py``).

moto 5.2.5 answers ``StartMessageMoveTask``, ``ListMessageMoveTasks`` and ``CancelMessageMoveTask``
with HTTP 500. These methods parse the request and call the backend methods
:mod:`.sqs_move_tasks` adds, as moto's own responses do.
"""

from __future__ import annotations

from typing import Any

from moto.core.responses import ActionResult
from moto.sqs.responses import SQSResponse

from constructs_fifo.local.emulator.patches.registry import replace

__all__ = ["patch"]


def _start_message_move_task(self: Any) -> Any:
    rate = self._get_param("MaxNumberOfMessagesPerSecond")
    handle = self.sqs_backend.start_message_move_task(
        self._get_param("SourceArn"),
        self._get_param("DestinationArn"),
        None if rate is None else int(rate),
    )
    return ActionResult({"TaskHandle": handle})


def _list_message_move_tasks(self: Any) -> Any:
    max_results = int(self._get_param("MaxResults") or 1)
    tasks = self.sqs_backend.list_message_move_tasks(self._get_param("SourceArn"), max_results)
    return ActionResult({"Results": tasks})


def _cancel_message_move_task(self: Any) -> Any:
    moved = self.sqs_backend.cancel_message_move_task(self._get_param("TaskHandle"))
    return ActionResult({"ApproximateNumberOfMessagesMoved": moved})


def patch() -> None:
    """Apply the SQS response patches (item 7 of the package docstring)."""
    replace(SQSResponse, "start_message_move_task", _start_message_move_task)
    replace(SQSResponse, "list_message_move_tasks", _list_message_move_tasks)
    replace(SQSResponse, "cancel_message_move_task", _cancel_message_move_task)
