"""The DynamoDB capacity units a batch consumed, as DynamoDB reports them: no extra call.

:meth:`CapacityTally.attach` hooks one boto3 DynamoDB client (botocore's event system, so the claim
store, the park store, the state store and the crash watch are covered without touching their calls):

1. **One flag.** Every call whose operation takes ``ReturnConsumedCapacity`` gets ``"TOTAL"`` unless
   the caller set it; DynamoDB then answers with what the call consumed. No call is added.
2. **Summed.** The ``CapacityUnits`` of every answer's ``ConsumedCapacity`` (one entry, or a list for
   ``BatchGetItem`` and ``TransactWriteItems``) are added up; :meth:`CapacityTally.take` returns the
   sum since the last take and starts again (the processors take it once per batch, for the batch's
   line and its ``CapacityUnitsConsumed`` metric).
3. **What it misses.** A refused call (a failed condition, a cancelled transaction, throttling) is
   answered with an error that carries no ``ConsumedCapacity``, so the units of lost races are not in
   the sum; a batch's successful reads and writes, which are what a job costs, are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CapacityTally", "consumed_units"]

_FLAG = "ReturnConsumedCapacity"


def consumed_units(answer: Mapping[str, Any]) -> float:
    """The capacity units of one DynamoDB answer (0.0 when it carries no ``ConsumedCapacity``).

    Examples
    --------
    >>> consumed_units({"ConsumedCapacity": {"TableName": "t", "CapacityUnits": 2.0}})
    2.0
    >>> consumed_units({"ConsumedCapacity": [{"CapacityUnits": 1.0}, {"CapacityUnits": 0.5}]})
    1.5
    >>> consumed_units({})
    0.0
    """
    consumed = answer.get("ConsumedCapacity")
    if isinstance(consumed, dict):  # one table's call: every call of a job
        return float(consumed.get("CapacityUnits", 0.0))
    entries = consumed if isinstance(consumed, list) else []
    return float(sum(float(entry.get("CapacityUnits", 0.0)) for entry in entries))


class CapacityTally:
    """Adds up the capacity units DynamoDB reports for the calls of the clients it is attached to.

    Examples
    --------
    >>> tally = CapacityTally()
    >>> tally.attach(boto3.client("dynamodb"))  # doctest: +SKIP
    >>> tally.take()
    0.0
    """

    def __init__(self) -> None:
        self._units = 0.0

    def attach(self, client: Any) -> None:
        """Hook ``client`` (a boto3 DynamoDB client): rules 1 and 2. Attaching twice changes nothing.

        A client without botocore's event system (a test double) is left as it is: nothing is counted.
        """
        events = getattr(getattr(client, "meta", None), "events", None)
        if events is None:
            return
        events.register("provide-client-params.dynamodb", self._ask, unique_id=f"capacity-ask-{id(self)}")
        events.register("after-call.dynamodb", self._add, unique_id=f"capacity-add-{id(self)}")

    def add(self, units: float) -> None:
        """Add ``units`` consumed by a call made outside an attached client."""
        self._units += units

    def take(self) -> float:
        """The units consumed since the last take (rounded to 0.001); the sum starts again at 0."""
        units, self._units = self._units, 0.0
        return round(units, 3)

    @staticmethod
    def _ask(params: dict[str, Any], model: Any, **_: Any) -> None:
        if _FLAG in model.input_shape.members and _FLAG not in params:
            params[_FLAG] = "TOTAL"

    def _add(self, parsed: Mapping[str, Any] | None = None, **_: Any) -> None:
        if parsed:
            self._units += consumed_units(parsed)
