"""Sample job code with an effect outside the runtime's store: record a notification (claim mode).

The notification queue runs in claim mode (the construct's default, handler ``notifier.handle``): the
runtime claims each job in its claim table before :func:`handle` runs, skips a duplicate of a job
that already succeeded, and retries a failed one. What claim mode cannot promise is the window
between the effect and the runtime's SUCCEEDED write: a crash there runs the job again after its
lease. So the effect is idempotent by job id: one conditional ``PutItem`` of the notification
(``attribute_not_exists``) in the table named by ``NOTIFICATION_TABLE_NAME``; a second run finds it
there, leaves it as it is and counts itself in ``replays`` (one ``UpdateItem``, only then), so a
reader can tell that the claim table did not stop that delivery.

Each notification item: ``notificationId`` (the job id), ``workspaceId`` (the group without ``ws#``),
``channel``, ``text``, ``slug`` (the text as a URL slug, by the third-party package ``python-slugify``,
which the construct bundles from ``requirements.txt``: the sample's proof that a job's dependencies reach
the function and the local drain), and ``replays`` once a run found it already recorded. For demos the payload
may ask for failure (:mod:`simulation`).

:func:`handle` returns ``{"delivered": <job id>}``: claim mode stores a job function's JSON return value
with its SUCCEEDED claim, so a caller waiting on the job (``JobOutcomes.wait``,
``JobProducer.send_and_wait``) gets it as the outcome's ``result``. It is the same on a replay, so the
result does not depend on which run's claim write won.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import boto3
from botocore.exceptions import ClientError
from simulation import SimulatedFailureError, simulate_failure
from slugify import slugify

from constructs_fifo.runtime import Job

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = [
    "DELIVERED",
    "ENV_NOTIFICATION_TABLE",
    "NOTIFICATION_KEY",
    "REPLAYS",
    "NotificationStore",
    "SimulatedFailureError",
    "handle",
]

ENV_NOTIFICATION_TABLE = "NOTIFICATION_TABLE_NAME"
#: The notification table's partition key: the job id.
NOTIFICATION_KEY = "notificationId"
#: Runs that found the notification already recorded (absent when none did).
REPLAYS = "replays"
#: The key of :func:`handle`'s result naming the job whose notification is recorded.
DELIVERED = "delivered"
_GROUP_PREFIX = "ws#"


class NotificationStore:
    """Records notifications, once per job id.

    Parameters
    ----------
    table
        A boto3 DynamoDB ``Table`` resource (tests pass one bound to moto).
    """

    def __init__(self, table: Table) -> None:
        self._table = table

    def record(self, job: Job) -> bool:
        """Record ``job``'s notification; ``False`` when it was already recorded (then counted in replays)."""
        payload = job.payload if isinstance(job.payload, dict) else {}
        item = {
            NOTIFICATION_KEY: job.id,
            "workspaceId": job.group.removeprefix(_GROUP_PREFIX),
            "channel": str(payload.get("channel", "")),
            "text": str(payload.get("text", "")),
        }
        item["slug"] = slugify(item["text"])
        try:
            self._table.put_item(
                Item=item,
                ConditionExpression="attribute_not_exists(#key)",
                ExpressionAttributeNames={"#key": NOTIFICATION_KEY},
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
            self._table.update_item(
                Key={NOTIFICATION_KEY: job.id},
                UpdateExpression="ADD #replays :one",
                ExpressionAttributeNames={"#replays": REPLAYS},
                ExpressionAttributeValues={":one": 1},
            )
            return False
        return True


_store: NotificationStore | None = None


def _default_store() -> NotificationStore:
    global _store  # noqa: PLW0603 - one resource per Lambda container, created on first use
    if _store is None:
        table_name = os.environ.get(ENV_NOTIFICATION_TABLE)
        if not table_name:
            raise RuntimeError(
                f"environment variable {ENV_NOTIFICATION_TABLE} is not set: the notifier needs the "
                "notification table's name; set it on the function (the sample app does)."
            )
        _store = NotificationStore(boto3.resource("dynamodb").Table(table_name))
    return _store


def handle(job: Job, context: object, *, store: NotificationStore | None = None) -> dict[str, str]:
    """Record ``job``'s notification, once; return ``{"delivered": job.id}`` (the job's stored result).

    Parameters
    ----------
    job
        The job from the constructs-fifo runtime (type ``notify``; payload ``channel`` and ``text``).
    context
        The Lambda context (unused).
    store
        Where notifications go; by default the table named by ``NOTIFICATION_TABLE_NAME``.

    Raises
    ------
    PermanentJobError
        A poison job (the payload asked for it).
    SimulatedFailureError
        Transient (the payload asked for it): the runtime retries the job.
    """
    simulate_failure(job)
    (store or _default_store()).record(job)
    return {DELIVERED: job.id}
