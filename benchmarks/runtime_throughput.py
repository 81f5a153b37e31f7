"""Figure 4: jobs per second of each consumer on moto in-process (and figure 1's exact call counts).

Each consumer gets a fresh ``mock_aws()`` with its tables (:attr:`ConsumerSpec.tables`) and the FIFO
queue, one untimed warm-up batch (first-call costs of botocore and moto), then the timed passes of
:mod:`benchmarks.passes`. The job function does nothing, so the figures are the cost of the machinery
around it; on moto most of that is botocore and moto's own request parsing and expression evaluation,
which is why only the ratio between consumers of one run means much. moto evaluates conditions the way
DynamoDB does, so the DynamoDB calls counted here are figure 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchmarks.consumers import ConsumerSpec
from benchmarks.passes import PassResult, run_passes
from benchmarks.workload import REGION, Workload, aws_environment

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.type_defs import KeySchemaElementTypeDef

__all__ = ["run_on_moto"]


def run_on_moto(spec: ConsumerSpec, work: Workload) -> list[PassResult]:
    """Measure ``spec``'s consumer on moto in-process; see the module docstring."""
    aws_environment()
    from moto import mock_aws  # noqa: PLC0415

    with mock_aws():
        dynamodb = spec.client("dynamodb", region_name=REGION)
        sqs = spec.client("sqs", region_name=REGION)
        for table in spec.tables:
            key_schema: list[KeySchemaElementTypeDef] = [
                {"AttributeName": table.partition_key, "KeyType": "HASH"}
            ]
            if table.sort_key is not None:
                key_schema.append({"AttributeName": table.sort_key, "KeyType": "RANGE"})
            dynamodb.create_table(
                TableName=table.name,
                KeySchema=key_schema,
                AttributeDefinitions=[
                    {"AttributeName": name, "AttributeType": "S"} for name in table.key_names
                ],
                BillingMode="PAY_PER_REQUEST",
            )
        queue_url = sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        return run_passes(spec, work, dynamodb=dynamodb, sqs=sqs, queue_url=queue_url)
