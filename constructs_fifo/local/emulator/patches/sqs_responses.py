"""Fidelity patches of moto's SQS responses: request parsing only (``moto/sqs/responses.py``).

moto 5.2.5 answers ``StartMessageMoveTask``, ``ListMessageMoveTasks`` and ``CancelMessageMoveTask``
with HTTP 500. These methods parse the request and call the backend methods
:mod:`.sqs_move_tasks` adds, as moto's own responses do. :func:`_parse_parameters` and
:func:`_determine_response_protocol` read a GET request (the query API: ``GET
queue-url?Action=GetQueueAttributes&AttributeName.1=All``) as the query protocol it is; moto parsed
it as JSON, found no parameters and answered ``{}``.
"""

from __future__ import annotations

from typing import Any

from moto.core.responses import ActionResult, BaseResponse
from moto.sqs.responses import SQSResponse

from constructs_fifo.local.emulator.patches.registry import replace

#: The content type of the query protocol: what a GET request's parameters are.
_QUERY_CONTENT_TYPE = "application/x-www-form-urlencoded"

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


def _parse_parameters(self: Any, request: Any) -> None:
    """Parse a GET request's query string with the query protocol (else as moto does).

    AWS: making-api-requests / sqs-api-requests ("Query API requests are HTTP or HTTPS requests that
    use the HTTP verb GET or POST and a Query parameter named Action"); observed on AWS: a signed GET
    ``Action=GetQueueAttributes`` to a FIFO queue's URL answers the attributes. moto chose the
    protocol from the Content-Type header alone; a GET has none, so moto read it as JSON.
    """
    if request.method == "GET" and not request.content_type:
        request.environ["CONTENT_TYPE"] = _QUERY_CONTENT_TYPE
        request.__dict__.pop("content_type", None)  # werkzeug caches the header it read
    BaseResponse.parse_parameters(self, request)  # SQSResponse inherits it


def _determine_response_protocol(self: Any, service_model: Any) -> str:
    """A GET request is answered in the query protocol's XML, as AWS answers it (see above)."""
    if self.method == "GET" and not self.headers.get("Content-Type"):
        return "query"
    return BaseResponse.determine_response_protocol(self, service_model)


def patch() -> None:
    """Apply the SQS response patches (items 7 and 11 of the package docstring)."""
    replace(SQSResponse, "start_message_move_task", _start_message_move_task)
    replace(SQSResponse, "list_message_move_tasks", _list_message_move_tasks)
    replace(SQSResponse, "cancel_message_move_task", _cancel_message_move_task)
    replace(SQSResponse, "parse_parameters", _parse_parameters)
    replace(SQSResponse, "determine_response_protocol", _determine_response_protocol)
