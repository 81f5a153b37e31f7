"""A fault injector on boto3 clients: errors and crashes at any AWS call, chosen per call by the test.

The injector does not choose: at each scheduling point the test's thread draws a :class:`Fault` (or
none) and hands it to the worker with the scheduler's step; in the worker's thread the botocore
hooks call :meth:`FaultInjector.before` in ``before-call`` and :meth:`FaultInjector.after` in
``after-call``. It counts every fault it injected.

The faults, as a worker sees them:

- ``PROVISIONED_THROUGHPUT``, ``THROTTLING``, ``INTERNAL_ERROR``: the call fails before it reaches
  the service (botocore's own retries are spent): nothing happened, the caller gets a ``ClientError``.
- ``LOST_RESPONSE``: the call took effect, but the caller gets an ``InternalServerError`` (a 500
  after the write, a timeout on the way back): the ambiguous failure.
- ``CRASH``: the worker stops dead before the call (:class:`Crash`, a ``BaseException`` the runtime
  does not catch: the Lambda function fails, its whole batch comes back). At the job function's own
  points it stops the worker after the claim (``job.start``) or after the side effect (``job.end``).
- ``CRASH_AFTER``: the call took effect, then the worker stops dead.
- ``PARTIAL_FAILURE`` (ChangeMessageVisibilityBatch only): the call succeeds for some entries and
  fails for the others (every second one, ``InternalError``), as a batch call may: records of one
  group end with different visibility deadlines, so a group's front can come back while a later
  record of it is still in flight (AWS's FIFO rule serves it; the model endpoint applies the fault).
"""

from __future__ import annotations

import enum
from collections import Counter
from typing import Any

from botocore.exceptions import ClientError
from functional.fifo_model import Crash

from .calls import Point

__all__ = ["PARTIAL_FAILURE_KEY", "Crash", "Fault", "FaultInjector"]

_ARMED = "chaos.after-fault"


class Fault(enum.Enum):
    """One fault at one scheduling point; see the module docstring."""

    PROVISIONED_THROUGHPUT = "ProvisionedThroughputExceededException"
    THROTTLING = "ThrottlingException"
    INTERNAL_ERROR = "InternalError"
    LOST_RESPONSE = "LostResponse"
    CRASH = "Crash"
    CRASH_AFTER = "CrashAfter"
    PARTIAL_FAILURE = "PartialFailure"


_DYNAMODB = (
    Fault.PROVISIONED_THROUGHPUT,
    Fault.THROTTLING,
    Fault.INTERNAL_ERROR,
    Fault.LOST_RESPONSE,
    Fault.CRASH,
    Fault.CRASH_AFTER,
)
_SQS = (Fault.THROTTLING, Fault.INTERNAL_ERROR, Fault.LOST_RESPONSE, Fault.CRASH, Fault.CRASH_AFTER)
_SQS_BATCH = (*_SQS, Fault.PARTIAL_FAILURE)
_JOB = (Fault.CRASH,)

#: Set in a call's request context when its entries fail in part (the model endpoint reads it).
PARTIAL_FAILURE_KEY = "chaos.partial-failure"


class FaultInjector:
    """Raises the faults the test chose, in the worker's thread; counts them.

    Attributes
    ----------
    injected : Counter
        ``(fault name, point label)`` -> how many times it was injected.
    """

    def __init__(self) -> None:
        self.injected: Counter[tuple[str, str]] = Counter()

    @staticmethod
    def faults_for(point: Point) -> tuple[Fault, ...]:
        """The faults that can happen at ``point`` (a crash only, at the job function's points)."""
        if point.service == "dynamodb":
            return _DYNAMODB
        if point.service == "sqs":
            return _SQS_BATCH if point.operation == "ChangeMessageVisibilityBatch" else _SQS
        return _JOB

    def before(self, point: Point, fault: Fault | None, context: dict[str, Any]) -> None:
        """Inject ``fault`` before the call at ``point`` (or arm it for :meth:`after`)."""
        if fault is None:
            return
        if fault not in self.faults_for(point):
            raise ValueError(f"{fault.name} cannot happen at {point.label}")
        self.injected[(fault.name, point.label)] += 1
        if fault is Fault.CRASH:
            raise Crash(f"injected: the worker stops dead before {point.label} ({point.target})")
        if fault is Fault.PARTIAL_FAILURE:
            context[PARTIAL_FAILURE_KEY] = True
            return
        if fault in (Fault.LOST_RESPONSE, Fault.CRASH_AFTER):
            context[_ARMED] = fault
            return
        raise _client_error(point, fault)

    def after(self, point: Point, context: dict[str, Any]) -> None:
        """Raise the fault armed for after the call at ``point`` (the call took effect)."""
        fault = context.pop(_ARMED, None)
        if fault is Fault.CRASH_AFTER:
            raise Crash(f"injected: the worker stops dead after {point.label} ({point.target}) took effect")
        if fault is Fault.LOST_RESPONSE:
            raise _client_error(point, fault)

    @property
    def total(self) -> int:
        """Every fault injected so far."""
        return sum(self.injected.values())


def _client_error(point: Point, fault: Fault) -> ClientError:
    """The ``ClientError`` a worker would get from botocore for ``fault`` at ``point``."""
    if fault in (Fault.INTERNAL_ERROR, Fault.LOST_RESPONSE):
        code = "InternalServerError" if point.service == "dynamodb" else "InternalError"
        status, message = 500, "injected: internal error"
        if fault is Fault.LOST_RESPONSE:
            message = "injected: the request took effect, the response was lost"
    else:
        code, status, message = fault.value, 400, "injected: request rate too high"
    response: Any = {
        "Error": {"Code": code, "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, point.operation)
