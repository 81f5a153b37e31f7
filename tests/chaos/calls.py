"""What one boto3 call is, as the chaos hooks see it: service, operation and the caller's parameters.

botocore's ``before-call`` event gets the serialized request, not the keyword arguments the caller
passed. :func:`remember_params` copies those arguments into the call's request context at
``before-parameter-build``, so every later hook of the same call (``before-call``, ``after-call``)
can read them with :func:`api_params`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_PARAMS_KEY = "chaos.params"


def remember_params(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    """``before-parameter-build`` handler: keep the caller's parameters in the request context."""
    context[_PARAMS_KEY] = params


def api_params(context: dict[str, Any]) -> dict[str, Any]:
    """The caller's parameters of the call whose request context this is (empty when unknown)."""
    params = context.get(_PARAMS_KEY)
    return params if isinstance(params, dict) else {}


def attach_param_memory(client: Any) -> None:
    """Register :func:`remember_params` on every call of ``client`` (idempotent)."""
    client.meta.events.register(
        "before-parameter-build", remember_params, unique_id="constructs-fifo-chaos-params"
    )


@dataclass(frozen=True)
class Point:
    """A scheduling point: an AWS call about to be made, or a step of the job function.

    Attributes
    ----------
    service : str
        ``dynamodb``, ``sqs``, or ``job`` for the job function's own points.
    operation : str
        The API operation (``PutItem``), or ``start`` / ``end`` of a job's run.
    target : str
        The table name, the queue URL, or the job id.
    params : dict
        The caller's parameters of an AWS call.
    """

    service: str
    operation: str
    target: str = ""
    params: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def label(self) -> str:
        """``service.operation``, e.g. ``dynamodb.PutItem`` or ``job.start``."""
        return f"{self.service}.{self.operation}"


def point_of_call(service: str, operation: str, params: dict[str, Any]) -> Point:
    """The scheduling point of an AWS call, its target read from the caller's parameters."""
    target = str(params.get("TableName") or params.get("QueueUrl") or "")
    if not target and "TransactItems" in params:
        tables = {
            str(next(iter(item.values())).get("TableName", "")) for item in params["TransactItems"] if item
        }
        target = ",".join(sorted(tables))
    if not target and "RequestItems" in params:
        target = ",".join(sorted(params["RequestItems"]))
    return Point(service, operation, target, params)
