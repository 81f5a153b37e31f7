"""The baseline: what a user would write with Powertools for AWS Lambda (Python) instead of our runtime.

``SqsFifoPartialProcessor(skip_group_on_error=True)`` (the mode that keeps other groups going, like
ours) with ``idempotent_function`` keyed on the body's ``jobId`` and a ``DynamoDBPersistenceLayer``
on an equivalent table (partition key ``id``, string; Powertools' defaults). The record expiry is set
to our default claim TTL (7 days), the local cache stays off (ours has none), and the Lambda context is
registered per batch so the in-progress lease is the remaining time, as in ours.

Powertools is an optional dependency of the benchmark only (``pip install -e '.[bench]'``); when it
is missing, :func:`available` says so and the benchmark reports the baseline as skipped.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from typing import Any

from benchmarks.runtime_throughput import (
    REGION,
    TABLE,
    BenchContext,
    PassResult,
    Record,
    Workload,
    aws_environment,
    create_claim_table,
    measure,
)
from constructs_fifo.runtime.constants import DEFAULT_CLAIM_TTL_SECONDS

__all__ = ["INSTALL_HINT", "POWERTOOLS_IMPORT", "POWERTOOLS_VERSION", "available", "run_powertools"]

POWERTOOLS_VERSION = "3.37.0"
INSTALL_HINT = (
    "install it with: .venv/bin/pip install -e '.[bench]' "
    f"(or pip install aws-lambda-powertools=={POWERTOOLS_VERSION})"
)
#: The modules a Powertools consumer imports for this (also used by the cold-start measurement).
POWERTOOLS_IMPORT = (
    "from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response; "
    "from aws_lambda_powertools.utilities.idempotency import "
    "DynamoDBPersistenceLayer, IdempotencyConfig, idempotent_function"
)


def available() -> str | None:
    """Return the installed Powertools version, or ``None`` when it cannot be imported."""
    if importlib.util.find_spec("aws_lambda_powertools") is None:
        return None
    from importlib.metadata import version  # noqa: PLC0415

    return version("aws-lambda-powertools")


def run_powertools(work: Workload) -> list[PassResult]:
    """Measure the Powertools consumer on the same workload, in a fresh moto."""
    aws_environment()
    import boto3  # noqa: PLC0415

    # Imported by name so that type checking never needs the optional package installed.
    batch = importlib.import_module("aws_lambda_powertools.utilities.batch")
    idempotency = importlib.import_module("aws_lambda_powertools.utilities.idempotency")
    from moto import mock_aws  # noqa: PLC0415

    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        create_claim_table(dynamodb)
        persistence = idempotency.DynamoDBPersistenceLayer(table_name=TABLE, boto3_client=dynamodb)
        config = idempotency.IdempotencyConfig(
            event_key_jmespath="jobId", expires_after_seconds=DEFAULT_CLAIM_TTL_SECONDS
        )
        executed = [0]

        def run_job(job: dict[str, Any]) -> None:
            executed[0] += 1

        handle = idempotency.idempotent_function(
            run_job, data_keyword_argument="job", persistence_store=persistence, config=config
        )

        def record_handler(record: Any) -> None:
            handle(job=json.loads(record.body))

        context = BenchContext()
        processor = batch.SqsFifoPartialProcessor(skip_group_on_error=True)  # once, as its docs show

        def process_batch(records: list[Record]) -> dict[str, Any]:
            config.register_lambda_context(context)
            response = batch.process_partial_response(
                event={"Records": records},
                record_handler=record_handler,
                processor=processor,
                context=context,
            )
            return dict(response)

        return measure("powertools", work, process_batch, dynamodb=dynamodb, executed=executed)
