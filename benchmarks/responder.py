"""One in-memory stand-in for DynamoDB and SQS, answering boto3 clients from a botocore ``before-send`` hook.

Every consumer of the benchmark talks to the same responder through its ordinary boto3 clients: botocore
builds, serialises and signs each request as it would for AWS, the hook answers it from memory instead
of the network, and botocore parses the answer. So the CPU left to measure is the consumer's own code
plus the client-side cost of every call it makes, not moto's parser (figure 2); an optional fixed sleep
per call stands in for the service's in-region latency (figures 3 and 6). The time spent inside the hook
is measured (:attr:`Responder.cpu_seconds`) so that it can be taken out: it is the server's share.

The model, and where it is simpler than DynamoDB:

- Items by key, per table (the key attributes come from :class:`TableSpec`). Conditions, update
  expressions and key conditions are *evaluated* (:mod:`benchmarks.ddb_expressions`), not assumed, so
  a condition that refuses a present item refuses it, and a version-conditioned state write on a
  present item succeeds. A condition failure is ``ConditionalCheckFailedException``, carrying the item
  when ``ReturnValuesOnConditionCheckFailure`` is ``ALL_OLD``, as DynamoDB does.
- Operations: PutItem, UpdateItem, GetItem, DeleteItem, BatchGetItem, BatchWriteItem,
  TransactWriteItems (all or nothing, ``TransactionCanceledException`` with cancellation reasons),
  TransactGetItems, and Query on the partition key (one optional sort-key comparison, no filter, no
  index, no paging). ``ReturnValues`` NONE, ALL_OLD, ALL_NEW and UPDATED_NEW (modelled as the
  stored attributes the write added or changed).
- Capacity: every call's read and write units are computed by DynamoDB's rules
  (:mod:`benchmarks.capacity`) from the items before and after it, added to :attr:`Responder.capacity`
  and answered as ``ConsumedCapacity`` when the request asks ``ReturnConsumedCapacity``.
- Not modelled: throttling, TTL deletion (expired items stay, as they do for a while on
  DynamoDB), projections (whole items are returned), nested attribute paths. The 400 KB item limit
  is checked approximately (the item's JSON length). A request outside the model is answered with an
  error *and* recorded in :attr:`Responder.errors`; the benchmark refuses a run with any.
- SQS: ChangeMessageVisibility(Batch), SendMessage(Batch) and DeleteMessage(Batch) succeed at once.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders

from benchmarks.capacity import CapacityMeter
from benchmarks.ddb_expressions import (
    UnsupportedExpressionError,
    apply_update,
    condition_holds,
    key_condition,
)

__all__ = ["MAX_ITEM_BYTES", "Responder", "TableSpec"]

#: DynamoDB's item size limit (checked approximately, on the item's JSON).
MAX_ITEM_BYTES = 400 * 1024

Item = dict[str, dict[str, Any]]
_DDB_ERROR = "com.amazonaws.dynamodb.v20120810#"
_SQS_ERROR = "com.amazonaws.sqs#"


@dataclass(frozen=True)
class TableSpec:
    """A table of a consumer: its name and key attribute names (what the model needs)."""

    name: str
    partition_key: str
    sort_key: str | None = None

    @property
    def key_names(self) -> tuple[str, ...]:
        return (self.partition_key,) if self.sort_key is None else (self.partition_key, self.sort_key)


class _RefusedError(Exception):
    """An error answer: HTTP 400 with a JSON error body."""

    def __init__(self, code: str, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.code = code
        self.fields = fields


class _Raw:
    """The body stream botocore reads an :class:`AWSResponse` from."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


class Responder:
    """Answers the DynamoDB and SQS calls of the clients it is attached to, from memory.

    Parameters
    ----------
    tables : Iterable[TableSpec]
        The tables that exist.
    delay_seconds : float
        Sleep before answering each DynamoDB call (0: answer at once).
    sqs_delay_seconds : float
        Sleep before answering each SQS call (0: answer at once).
    sleep : Callable[[float], None]
        Injectable for tests.

    Examples
    --------
    >>> responder = Responder([TableSpec("claims", "id")])  # doctest: +SKIP
    >>> responder.attach(dynamodb_client, sqs_client)  # doctest: +SKIP
    >>> dynamodb_client.get_item(TableName="claims", Key={"id": {"S": "j-1"}})  # doctest: +SKIP
    """

    def __init__(
        self,
        tables: Iterable[TableSpec],
        *,
        delay_seconds: float = 0.0,
        sqs_delay_seconds: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.tables = {table.name: table for table in tables}
        self.delay_seconds = delay_seconds
        self.sqs_delay_seconds = sqs_delay_seconds
        self._sleep = sleep
        self._items: dict[str, dict[tuple[Any, ...], Item]] = {name: {} for name in self.tables}
        #: Operations answered, as ``"dynamodb.PutItem"``.
        self.calls: Counter[str] = Counter()
        #: Requests outside the model (each also answered with an error).
        self.errors: list[str] = []
        #: Process CPU spent inside the hook: the stand-in server's share, not the client's.
        self.cpu_seconds = 0.0
        #: Read and write units of every DynamoDB call answered (figure 9).
        self.capacity = CapacityMeter()
        self._transactional = False  # inside TransactWriteItems / TransactGetItems: units count twice
        self._attached: list[Any] = []
        self._id = f"bench-responder-{uuid.uuid4()}"

    # --- wiring --------------------------------------------------------------------------------------

    def attach(self, *clients: Any) -> None:
        """Answer every request of ``clients`` (boto3 DynamoDB or SQS clients)."""
        for client in clients:
            client.meta.events.register("before-send", self._on_send, unique_id=self._id)
            self._attached.append(client)

    def detach(self) -> None:
        """Stop answering (requests would go to the network again)."""
        for client in self._attached:
            client.meta.events.unregister("before-send", unique_id=self._id)
        self._attached.clear()

    def items(self, table: str) -> list[Item]:
        """The items of ``table`` (for tests and checks)."""
        return list(self._items[table].values())

    def answer(self, service: str, operation: str, params: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """The model's answer to one request, as the service's JSON body and HTTP status.

        ``service`` is ``"dynamodb"`` or ``"sqs"``, ``operation`` the API name (``"PutItem"``),
        ``params`` the request as its JSON body holds it (the low-level client's parameters). An error is
        answered as the service sends it: ``{"__type": ..., "message": ..., <fields>}`` with status 400.
        """
        self.calls[f"{service}.{operation}"] += 1
        handler = getattr(self, f"_{service}_{operation}", None)
        error_type = _DDB_ERROR if service == "dynamodb" else _SQS_ERROR
        try:
            if handler is None:
                raise _RefusedError("UnknownOperationException", f"{service} {operation} is not modelled")
            return handler(params), 200
        except UnsupportedExpressionError as exc:
            self.errors.append(f"{service} {operation}: {exc}")
            return {"__type": f"{error_type}ValidationException", "message": str(exc)}, 400
        except _RefusedError as exc:
            if exc.code in ("UnknownOperationException", "ResourceNotFoundException", "ValidationException"):
                self.errors.append(f"{service} {operation}: {exc}")
            return {"__type": f"{error_type}{exc.code}", "message": str(exc), **exc.fields}, 400

    def _on_send(self, request: Any, **_: Any) -> AWSResponse:
        started = time.process_time()
        header = request.headers.get("X-Amz-Target", b"")
        target = header.decode() if isinstance(header, bytes) else str(header)
        prefix, _dot, operation = target.partition(".")
        service = "dynamodb" if prefix.startswith("DynamoDB") else "sqs"
        answer, status = self.answer(service, operation, json.loads(request.body or b"{}"))
        body = json.dumps(answer).encode()
        headers = HTTPHeaders()
        headers["Content-Type"] = "application/x-amz-json-1.0"
        response = AWSResponse(request.url, status, headers, _Raw(body))
        self.cpu_seconds += time.process_time() - started
        delay = self.delay_seconds if service == "dynamodb" else self.sqs_delay_seconds
        if delay:
            self._sleep(delay)
        return response

    # --- DynamoDB ----------------------------------------------------------------------------------

    def _table(self, name: str) -> TableSpec:
        if name not in self.tables:
            raise _RefusedError("ResourceNotFoundException", f"Requested resource not found: table {name!r}")
        return self.tables[name]

    def _key(self, table: TableSpec, item: Item) -> tuple[Any, ...]:
        try:
            return tuple(next(iter(item[name].items())) for name in table.key_names)
        except KeyError as exc:
            raise _RefusedError(
                "ValidationException", f"key attribute {exc} missing for {table.name}"
            ) from exc

    def _consumed(self, params: dict[str, Any], table: str, units: float) -> dict[str, Any]:
        """The ``ConsumedCapacity`` field of an answer, when the request asked for it."""
        if params.get("ReturnConsumedCapacity", "NONE") == "NONE":
            return {}
        return {"ConsumedCapacity": {"TableName": table, "CapacityUnits": units}}

    def _write(
        self,
        params: dict[str, Any],
        new: Callable[[Item | None], Item | None],
        key_item: Item,
        *,
        operation: str,
    ) -> dict[str, Any]:
        """Check the condition, store ``new(old)`` (``None`` deletes), answer with ReturnValues; meter
        the larger of the item before and after (a refused write consumes as the write would have)."""
        table = self._table(params["TableName"])
        operation = "TransactWriteItems" if self._transactional else operation
        if "Expected" in params:
            raise _RefusedError("ValidationException", "the legacy Expected parameter is not modelled")
        key = self._key(table, key_item)
        old = self._items[table.name].get(key)
        names = params.get("ExpressionAttributeNames", {})
        values = params.get("ExpressionAttributeValues", {})
        if not condition_holds(params.get("ConditionExpression"), old, names, values):
            try:
                candidate = new(old)
            except (UnsupportedExpressionError, _RefusedError, KeyError):
                candidate = None
            self.capacity.wrote(operation, old, candidate, transactional=self._transactional)
            fields = {}
            if params.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and old is not None:
                fields["Item"] = old
            raise _RefusedError("ConditionalCheckFailedException", "The conditional request failed", **fields)
        stored = new(old)
        if stored is None:
            self._items[table.name].pop(key, None)
        else:
            if len(json.dumps(stored)) > MAX_ITEM_BYTES:
                raise _RefusedError("ValidationException", "Item size has exceeded the maximum allowed size")
            self._items[table.name][key] = stored
        units = self.capacity.wrote(operation, old, stored, transactional=self._transactional)
        updated = None if stored is None else {k: v for k, v in stored.items() if (old or {}).get(k) != v}
        returned = {"ALL_OLD": old, "ALL_NEW": stored, "UPDATED_NEW": updated}.get(
            params.get("ReturnValues", "NONE")
        )
        answer = {"Attributes": returned} if returned else {}
        return {**answer, **self._consumed(params, table.name, units)}

    def _dynamodb_PutItem(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        return self._write(params, lambda old: params["Item"], params["Item"], operation="PutItem")

    def _dynamodb_UpdateItem(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        def updated(old: Item | None) -> Item:
            start = old if old is not None else dict(params["Key"])
            return apply_update(
                params.get("UpdateExpression", ""),
                start,
                params.get("ExpressionAttributeNames", {}),
                params.get("ExpressionAttributeValues", {}),
            )

        return self._write(params, updated, params["Key"], operation="UpdateItem")

    def _dynamodb_DeleteItem(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        return self._write(params, lambda old: None, params["Key"], operation="DeleteItem")

    def _dynamodb_GetItem(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        table = self._table(params["TableName"])
        item = self._items[table.name].get(self._key(table, params["Key"]))
        units = self.capacity.read(
            "TransactGetItems" if self._transactional else "GetItem",
            [item],
            consistent=bool(params.get("ConsistentRead")),
            each=True,
            transactional=self._transactional,
        )
        answer = {"Item": item} if item is not None else {}
        return {**answer, **self._consumed(params, table.name, units)}

    def _dynamodb_BatchGetItem(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        responses: dict[str, list[Item]] = {}
        consumed = []
        for name, request in params["RequestItems"].items():
            table = self._table(name)
            found = [self._items[name].get(self._key(table, key)) for key in request["Keys"]]
            units = self.capacity.read(
                "BatchGetItem",
                found,
                consistent=bool(request.get("ConsistentRead")),
                each=True,
                transactional=False,
            )
            consumed.append({"TableName": name, "CapacityUnits": units})
            responses[name] = [item for item in found if item is not None]
        answer: dict[str, Any] = {"Responses": responses, "UnprocessedKeys": {}}
        if params.get("ReturnConsumedCapacity", "NONE") != "NONE":
            answer["ConsumedCapacity"] = consumed
        return answer

    def _dynamodb_BatchWriteItem(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        for name, requests in params["RequestItems"].items():
            for request in requests:
                if "PutRequest" in request:
                    self._dynamodb_PutItem({"TableName": name, "Item": request["PutRequest"]["Item"]})
                else:
                    self._dynamodb_DeleteItem({"TableName": name, "Key": request["DeleteRequest"]["Key"]})
        return {"UnprocessedItems": {}}

    def _dynamodb_TransactGetItems(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        self._transactional = True
        try:
            return {"Responses": [self._dynamodb_GetItem(entry["Get"]) for entry in params["TransactItems"]]}
        finally:
            self._transactional = False

    def _dynamodb_TransactWriteItems(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        entries = [next(iter(entry.items())) for entry in params["TransactItems"]]
        reasons: list[dict[str, Any]] = []
        olds: list[Item | None] = []
        for _kind, request in entries:  # every condition first: all or nothing
            table = self._table(request["TableName"])
            old = self._items[table.name].get(self._key(table, request.get("Key") or request["Item"]))
            olds.append(old)
            holds = condition_holds(
                request.get("ConditionExpression"),
                old,
                request.get("ExpressionAttributeNames", {}),
                request.get("ExpressionAttributeValues", {}),
            )
            reason: dict[str, Any] = {"Code": "None" if holds else "ConditionalCheckFailed"}
            if not holds and request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and old:
                reason["Item"] = old
            reasons.append(reason)
        for (kind, _request), old in zip(entries, olds, strict=True):
            if kind == "ConditionCheck":  # a check costs a transactional write of the item it reads
                self.capacity.wrote("TransactWriteItems", old, None, transactional=True)
        if any(reason["Code"] != "None" for reason in reasons):
            for (kind, request), old in zip(entries, olds, strict=True):
                if kind != "ConditionCheck":  # counted as if written (no published rule says otherwise)
                    after = request.get("Item")
                    self.capacity.wrote("TransactWriteItems", old, after, transactional=True)
            codes = ", ".join(reason["Code"] for reason in reasons)
            raise _RefusedError(
                "TransactionCanceledException",
                f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
                CancellationReasons=reasons,
            )
        writers = {"Put": self._dynamodb_PutItem, "Update": self._dynamodb_UpdateItem}
        writers["Delete"] = self._dynamodb_DeleteItem
        self._transactional = True
        try:
            for kind, request in entries:
                if kind != "ConditionCheck":
                    unconditional = {k: v for k, v in request.items() if k != "ConditionExpression"}
                    unconditional.pop("ReturnConsumedCapacity", None)
                    writers[kind](unconditional)
        finally:
            self._transactional = False
        return {}

    def _dynamodb_Query(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        table = self._table(params["TableName"])
        unsupported = {"IndexName", "FilterExpression", "ExclusiveStartKey", "KeyConditions"} & set(params)
        if unsupported:
            raise _RefusedError("ValidationException", f"Query with {sorted(unsupported)} is not modelled")
        name, value, sort_test = key_condition(
            params["KeyConditionExpression"],
            params.get("ExpressionAttributeNames", {}),
            params.get("ExpressionAttributeValues", {}),
        )
        if name != table.partition_key:
            raise _RefusedError("ValidationException", f"{name!r} is not the partition key of {table.name}")
        found = [item for item in self._items[table.name].values() if item.get(name) == value]
        found = [item for item in found if sort_test(item)]
        if table.sort_key is not None:
            sort_key = table.sort_key
            found.sort(key=lambda item: _sortable(item[sort_key]))
        if params.get("ScanIndexForward") is False:
            found.reverse()
        found = found[: params.get("Limit", len(found))]
        units = self.capacity.read(
            "Query", found, consistent=bool(params.get("ConsistentRead")), each=False, transactional=False
        )
        answer = {"Items": found, "Count": len(found), "ScannedCount": len(found)}
        return {**answer, **self._consumed(params, table.name, units)}

    # --- SQS --------------------------------------------------------------------------------------------

    def _sqs_ChangeMessageVisibility(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        return {}

    def _sqs_ChangeMessageVisibilityBatch(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        return {"Successful": [{"Id": entry["Id"]} for entry in params["Entries"]], "Failed": []}

    def _sqs_DeleteMessage(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        return {}

    def _sqs_DeleteMessageBatch(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        return self._sqs_ChangeMessageVisibilityBatch(params)

    def _sqs_SendMessage(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        return {
            "MessageId": str(uuid.uuid4()),
            "MD5OfMessageBody": hashlib.md5(
                params["MessageBody"].encode(), usedforsecurity=False
            ).hexdigest(),
            "SequenceNumber": str(sum(self.calls.values())).zfill(20),
        }

    def _sqs_SendMessageBatch(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        sent = [{"Id": entry["Id"], **self._sqs_SendMessage(entry)} for entry in params["Entries"]]
        return {"Successful": sent, "Failed": []}


def _sortable(value: dict[str, Any]) -> Any:
    return float(value["N"]) if "N" in value else next(iter(value.values()))
