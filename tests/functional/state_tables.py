"""The group table of state mode, created on moto for the state store's and the reader's tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

GROUP_TABLE = "groups"


def create_group_table(client: DynamoDBClient, name: str = GROUP_TABLE) -> None:
    """Create the group table as the construct will: partition key ``group``, sort key ``sk``."""
    client.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "group", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "group", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
