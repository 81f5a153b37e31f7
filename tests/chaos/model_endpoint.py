"""The model queue behind a real boto3 SQS client: calls to its URL are answered by a ``FifoModel``.

:class:`functional.fifo_model.ModelSqs` stands in for the SQS client with a duck type. The chaos
suite needs the runtime's own SQS code (``VisibilityChanger``, the wake-up sends) to go through
botocore, so that the scheduler's and the injector's hooks see those calls like any other. This
endpoint is a ``before-call`` handler that answers the calls addressed to the model's URL from the
model (botocore skips the HTTP request when a handler returns a response); calls to any other URL
(the dead-letter queue) go on to moto.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders

from constructs_fifo.runtime.backoff import VisibilityChange

from .calls import api_params, attach_param_memory
from .faults import PARTIAL_FAILURE_KEY

if TYPE_CHECKING:
    from functional.fifo_model import FifoModel


class ModelEndpoint:
    """Answers SendMessage(Batch), DeleteMessage(Batch), ChangeMessageVisibility(Batch) for the model's URL.

    Attributes
    ----------
    calls : list of str
        The operations answered, in order.
    """

    def __init__(self, model: FifoModel, on_refused_delete: Callable[[], None] = lambda: None) -> None:
        self.model = model
        self.calls: list[str] = []
        self._on_refused_delete = on_refused_delete

    def attach(self, client: Any) -> None:
        """Serve ``client``'s calls to the model's URL (register after any gate of the same client)."""
        attach_param_memory(client)
        client.meta.events.register("before-call.sqs", self._serve)

    def _serve(
        self, model: Any, context: dict[str, Any], **_: Any
    ) -> tuple[AWSResponse, dict[str, Any]] | None:
        params = api_params(context)
        if params.get("QueueUrl") != self.model.url:
            return None
        operation = str(model.name)
        self.calls.append(operation)
        if operation == "SendMessage":
            body = str(params["MessageBody"])
            message_id = self.model.send(
                str(params["MessageGroupId"]),
                body,
                str(params["MessageDeduplicationId"]),
                params.get("MessageAttributes"),
            )
            digest = hashlib.md5(body.encode("utf-8"), usedforsecurity=False).hexdigest()
            return _ok({"MessageId": message_id or f"deduplicated-{digest[:12]}", "MD5OfMessageBody": digest})
        batch = {
            "SendMessageBatch": self._send_batch,
            "DeleteMessageBatch": self._delete_batch,
            "ChangeMessageVisibilityBatch": self._change_batch,
        }.get(operation)
        if batch is not None:
            return _ok(batch(params, context))
        if operation == "DeleteMessage":
            if not self.model.delete(str(params["ReceiptHandle"])):
                return _error(400, "InvalidParameterValue", "The receipt handle has expired.")
            return _ok({})
        if operation == "ChangeMessageVisibility":
            if not self._change(str(params["ReceiptHandle"]), int(params["VisibilityTimeout"])):
                return _error(400, "ReceiptHandleIsInvalid", "the receipt handle has expired")
            return _ok({})
        raise NotImplementedError(f"the model queue does not answer {operation}")

    def _send_batch(self, params: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        del context
        sent = []
        for entry in params["Entries"]:
            message_id = self.model.send(
                str(entry["MessageGroupId"]),
                str(entry["MessageBody"]),
                str(entry["MessageDeduplicationId"]),
                entry.get("MessageAttributes"),
            )
            digest = hashlib.md5(str(entry["MessageBody"]).encode("utf-8"), usedforsecurity=False).hexdigest()
            sent.append(
                {"Id": entry["Id"], "MessageId": message_id or "deduplicated", "MD5OfMessageBody": digest}
            )
        return {"Successful": sent, "Failed": []}

    def _change_batch(self, params: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        successful: list[dict[str, str]] = []
        failed: list[dict[str, Any]] = []
        partial = bool(context.get(PARTIAL_FAILURE_KEY))
        for index, entry in enumerate(params["Entries"]):
            if partial and index % 2 == 1:
                failed.append(_internal_error(str(entry["Id"])))
            elif self._change(str(entry["ReceiptHandle"]), int(entry["VisibilityTimeout"])):
                successful.append({"Id": entry["Id"]})
            else:
                failed.append(_stale_receipt(str(entry["Id"])))
        return {"Successful": successful, "Failed": failed}

    def _delete_batch(self, params: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        del context
        deleted: list[dict[str, str]] = []
        refused: list[dict[str, Any]] = []
        for entry in params["Entries"]:
            if self.model.delete(str(entry["ReceiptHandle"])):
                deleted.append({"Id": entry["Id"]})
            else:
                self._on_refused_delete()
                refused.append(_stale_receipt(str(entry["Id"])))
        return {"Successful": deleted, "Failed": refused}

    def _change(self, receipt: str, seconds: int) -> bool:
        """Change one message's visibility; ``False`` when its receipt is not the latest (SQS refuses)."""
        if not any(message.receipt == receipt for message in self.model.messages):
            return False
        self.model.apply([VisibilityChange("", receipt, seconds)])
        return True


def _ok(body: dict[str, Any]) -> tuple[AWSResponse, dict[str, Any]]:
    return AWSResponse("https://sqs.model", 200, HTTPHeaders(), None), {
        **body,
        "ResponseMetadata": {"HTTPStatusCode": 200},
    }


def _error(status: int, code: str, message: str) -> tuple[AWSResponse, dict[str, Any]]:
    parsed = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return AWSResponse("https://sqs.model", status, HTTPHeaders(), None), parsed


def _internal_error(entry_id: str) -> dict[str, Any]:
    return {
        "Id": entry_id,
        "SenderFault": False,
        "Code": "InternalError",
        "Message": "injected: entry failed",
    }


def _stale_receipt(entry_id: str) -> dict[str, Any]:
    return {
        "Id": entry_id,
        "SenderFault": True,
        "Code": "ReceiptHandleIsInvalid",
        "Message": "the receipt handle has expired: the message was received again",
    }
