"""DynamoDB under concurrent requests, as the drain's workers make them; naming its pages.

Runs against the emulator and unchanged against real AWS with ``--aws`` (a few hundred writes).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from botocore.config import Config
from botocore.exceptions import ClientError

from .support import Target

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

#: Writes per thread: enough for the race to show on moto as shipped (a handful of 500s per run),
#: bounded to a few seconds.
WRITES_PER_THREAD = 60
PUT_THREADS = 3
TRANSACTION_THREADS = 3


def test_concurrent_transactions_and_puts_neither_fail_nor_lose_writes(
    target: Target, dynamodb: DynamoDBClient, table: str
) -> None:
    """AWS: API_TransactWriteItems ("an all-or-nothing operation"; a cancelled transaction changes
    nothing, so it cannot undo another request's write) and API_PutItem."""
    # GIVEN clients that do not retry (a server error must show), and a table with a guard item that
    # makes every other transaction cancel on its condition
    client: Any = target.session.client(
        "dynamodb", endpoint_url=target.endpoint_url, config=Config(retries={"total_max_attempts": 1})
    )
    dynamodb.put_item(TableName=table, Item={"id": {"S": "guard"}})
    errors: list[str] = []

    def puts(thread: int) -> list[str]:
        written = []
        for n in range(WRITES_PER_THREAD):
            key = f"put-{thread}-{n}"
            try:
                client.put_item(TableName=table, Item={"id": {"S": key}, "pad": {"S": "x" * 200}})
                written.append(key)
            except ClientError as err:
                errors.append(f"PutItem {key}: {err}")
        return written

    def transactions(thread: int) -> list[str]:
        written = []
        for n in range(WRITES_PER_THREAD):
            key = f"tx-{thread}-{n}"
            cancel = n % 2 == 1
            items: list[dict[str, Any]] = [
                {
                    "ConditionCheck": {
                        "TableName": table,
                        "Key": {"id": {"S": "guard"}},
                        "ConditionExpression": "attribute_not_exists(id)"
                        if cancel
                        else "attribute_exists(id)",
                    }
                },
                {"Put": {"TableName": table, "Item": {"id": {"S": key}}}},
            ]
            try:
                client.transact_write_items(TransactItems=items)
                written.append(key)
            except ClientError as err:
                if not (cancel and err.response["Error"]["Code"] == "TransactionCanceledException"):
                    errors.append(f"TransactWriteItems {key}: {err}")
        return written

    # WHEN puts and transactions (half of them cancelled) run at once
    with ThreadPoolExecutor(max_workers=PUT_THREADS + TRANSACTION_THREADS) as pool:
        futures = [pool.submit(puts, t) for t in range(PUT_THREADS)]
        futures += [pool.submit(transactions, t) for t in range(TRANSACTION_THREADS)]
        written = [key for future in futures for key in future.result()]
    # THEN no request failed: every put and every transaction not cancelled took effect
    assert errors == []
    assert len(written) == PUT_THREADS * WRITES_PER_THREAD + TRANSACTION_THREADS * WRITES_PER_THREAD // 2
    # AND every write is still there: no cancelled transaction rolled another one back
    found: set[str] = set()
    for page in dynamodb.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        found.update(item["id"]["S"] for item in page["Items"])
    assert set(written) - found == set()
