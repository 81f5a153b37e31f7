"""The boto3 clients the runtime makes for its own calls: Lambda's entry point and a worker's slots.

They are boto3's default clients but for one setting, botocore's client-side parameter validation,
which is off. Why:

- **What it checks is checked anyway.** Before sending, botocore walks each request against the
  service model (types, required members, lengths). Every request these clients send is built by the
  runtime from values it has already checked (a job's id and type are non-empty strings,
  :func:`~constructs_fifo.runtime.job.parse_record`), and DynamoDB and SQS validate every request
  themselves: a malformed one still fails, as a ``ValidationException`` (a ``ClientError``) from the
  service instead of a ``ParamValidationError`` before it.
- **It is about a tenth of a job's CPU.** A claim-mode job sends two DynamoDB requests of up to ten
  attributes, and walking them against the model is about a tenth of what a job costs with botocore
  (``make bench``, figure 2, measured both ways). botocore's reference names this use: "You can disable
  parameter validation for performance reasons"
  (https://docs.aws.amazon.com/botocore/latest/reference/config.html).

The producer, the state reader and the CLI keep boto3's default: their requests carry the caller's
values, and a mistake is best named before it leaves the machine. Clients passed in (a test's, a
benchmark's, an application's own) are used as they are.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PARAMETER_VALIDATION", "runtime_client"]

#: botocore's ``parameter_validation`` for the runtime's own clients (module docstring).
PARAMETER_VALIDATION = False


def runtime_client(service: str, *, region_name: str | None = None) -> Any:
    """A boto3 client for ``service`` (``"dynamodb"``, ``"sqs"``) as the runtime makes its own.

    Region, credentials and endpoint come from boto3's default chain (``AWS_REGION``,
    ``AWS_ENDPOINT_URL``, ...) unless ``region_name`` is given.

    Examples
    --------
    >>> sqs = runtime_client("sqs")  # doctest: +SKIP
    >>> sqs.get_queue_url()  # no QueueName: refused by SQS, not by botocore  # doctest: +SKIP
    """
    import boto3  # noqa: PLC0415 - importing the runtime must not load boto3
    from botocore.config import Config  # noqa: PLC0415

    make: Any = boto3.client  # typed per service name; ``service`` is any name here
    return make(service, region_name=region_name, config=Config(parameter_validation=PARAMETER_VALIDATION))
