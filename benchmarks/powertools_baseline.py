"""The baseline: what a user would write with Powertools for AWS Lambda (Python) instead of our runtime.

``SqsFifoPartialProcessor(skip_group_on_error=True)`` (the mode that keeps other groups going, like
ours) with ``idempotent_function`` keyed on the body's ``jobId`` and a ``DynamoDBPersistenceLayer``
on an equivalent table (partition key ``id``, string; Powertools' defaults). The record expiry is set
to our default claim TTL (7 days), the local cache stays off (ours has none), and the Lambda context is
registered per batch so the in-progress lease is the remaining time, as in ours.

Powertools is an optional dependency of the benchmark only (``pip install -e '.[bench]'``); when it
is missing, :func:`available` says so and the benchmark reports the baseline as not available.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.constants import DEFAULT_CLAIM_TTL_SECONDS

if TYPE_CHECKING:  # pragma: no cover - typing only
    from benchmarks.consumer_env import BatchFn, ConsumerEnv
    from benchmarks.workload import Batch

__all__ = [
    "IDEMPOTENCY_TABLE",
    "INSTALL_HINT",
    "POWERTOOLS_IMPORT",
    "POWERTOOLS_VERSION",
    "available",
    "build_powertools",
]

POWERTOOLS_VERSION = "3.37.0"
#: The baseline's table (partition key ``id``, Powertools' default).
IDEMPOTENCY_TABLE = "idempotency"
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


def build_powertools(env: ConsumerEnv) -> BatchFn:
    """The Powertools consumer, wired to ``env``'s DynamoDB client (a consumer factory)."""
    # Imported by name so that type checking never needs the optional package installed.
    batch = importlib.import_module("aws_lambda_powertools.utilities.batch")
    idempotency = importlib.import_module("aws_lambda_powertools.utilities.idempotency")
    persistence = idempotency.DynamoDBPersistenceLayer(
        table_name=IDEMPOTENCY_TABLE, boto3_client=env.dynamodb
    )
    config = idempotency.IdempotencyConfig(
        event_key_jmespath="jobId", expires_after_seconds=DEFAULT_CLAIM_TTL_SECONDS
    )

    def run_job(job: dict[str, Any]) -> None:
        env.job_ran()

    handle = idempotency.idempotent_function(
        run_job, data_keyword_argument="job", persistence_store=persistence, config=config
    )

    def record_handler(record: Any) -> None:
        handle(job=json.loads(record.body))

    processor = batch.SqsFifoPartialProcessor(skip_group_on_error=True)  # once, as its docs show

    def process_batch(records: Batch) -> dict[str, Any]:
        config.register_lambda_context(env.context)
        response = batch.process_partial_response(
            event={"Records": records},
            record_handler=record_handler,
            processor=processor,
            context=env.context,
        )
        return dict(response)

    return process_batch
