"""A client without botocore, answered by the in-memory responder: figure 2's framework-alone rows.

Figure 2 with boto3 clients measures a consumer's code plus botocore building, validating, signing and
parsing each call; most of it is botocore, the same on both sides at equal calls. To see the framework
alone, :class:`DirectClient` stands where the boto3 client stood: ``put_item(**params)`` hands the
parameters, which for DynamoDB's and SQS's JSON protocols are the request's body, to
:meth:`~benchmarks.responder.Responder.answer`, and returns its answer or raises its error as botocore
would (a :class:`botocore.exceptions.ClientError` subclass named by the error code, found on
``client.exceptions``, whose ``response`` carries the error's fields, e.g. the ``Item`` of a refused
condition). It is not a stand-in for AWS: the responder is the model, as it is for the boto3 runs, and
the call counts of both runs must agree (the benchmark checks).

What it leaves out is what botocore adds: no parameter validation, no event hooks (so no
``ReturnConsumedCapacity`` flag from the runtime's capacity tally, which needs botocore's events), no
``ResponseMetadata``. Each call's request and answer are copied through JSON, as the wire would, so a
consumer never shares a dict with the model: binary attribute values (``B``, ``BS``: bytes in boto3,
base64 on the wire) are encoded and decoded as botocore does. That copy is counted as the responder's
CPU, not the client's.
"""

from __future__ import annotations

import base64
import json
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, cast

from botocore.exceptions import ClientError

from benchmarks.responder import Responder

__all__ = ["DirectClient"]


def _base64(value: object) -> str:
    """A request's bytes as the wire carries them (base64), as botocore serializes a blob."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} is not a request value")


def _binary(value: Any) -> Any:
    """An answer with its binary attribute values as bytes again, as botocore parses them."""
    if isinstance(value, list):
        return [_binary(entry) for entry in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1 and isinstance(value.get("B"), str):
        return {"B": base64.b64decode(value["B"])}
    if len(value) == 1 and isinstance(value.get("BS"), list):
        return {"BS": [base64.b64decode(entry) for entry in value["BS"]]}
    return {key: _binary(entry) for key, entry in value.items()}


class _Errors:
    """``client.exceptions``: one :class:`ClientError` subclass per error code, made when first asked."""

    def __getattr__(self, code: str) -> type[ClientError]:
        if code.startswith("_"):
            raise AttributeError(code)
        error = type(code, (ClientError,), {})
        setattr(self, code, error)
        return error


class DirectClient:
    """A DynamoDB or SQS client whose calls go straight to a responder (see the module docstring).

    Parameters
    ----------
    responder : Responder
        The model that answers.
    service : str
        ``"dynamodb"`` or ``"sqs"``.

    Examples
    --------
    >>> from benchmarks.responder import TableSpec
    >>> client = DirectClient(Responder([TableSpec("claims", "id")]), "dynamodb")
    >>> client.put_item(TableName="claims", Item={"id": {"S": "j-1"}})
    {}
    >>> client.get_item(TableName="claims", Key={"id": {"S": "j-1"}})["Item"]
    {'id': {'S': 'j-1'}}
    >>> client.calls
    Counter({'PutItem': 1, 'GetItem': 1})
    """

    def __init__(self, responder: Responder, service: str) -> None:
        self.exceptions = _Errors()
        #: Calls made, by operation (``"PutItem"``), as the benchmark's call counter counts them.
        self.calls: Counter[str] = Counter()
        self._responder = responder
        self._service = service

    def __getattr__(self, method: str) -> Callable[..., dict[str, Any]]:
        if method.startswith("_"):
            raise AttributeError(method)
        operation = "".join(part.capitalize() for part in method.split("_"))  # put_item -> PutItem

        def call(**params: Any) -> dict[str, Any]:
            return self._call(operation, params)

        return call

    def _call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls[operation] += 1
        responder = self._responder
        started = time.process_time()
        answer, status = responder.answer(
            self._service, operation, json.loads(json.dumps(params, default=_base64))
        )
        answer = cast("dict[str, Any]", _binary(json.loads(json.dumps(answer))))
        responder.cpu_seconds += time.process_time() - started
        if status == 200:
            return answer
        code = str(answer.pop("__type", "")).rsplit("#", 1)[-1]
        message = str(answer.pop("message", ""))
        error: type[ClientError] = getattr(self.exceptions, code)
        response: Any = {"Error": {"Code": code, "Message": message}, **answer}
        raise error(response, operation)
