"""A deliberately wrong consumer for the negative end-to-end test: it keeps going after a failure.

It runs every record of a batch and reports only the records that failed, like a plain batch
processor on a FIFO queue: when a job of a group fails, the group's later jobs in the same batch are
applied anyway and the failed one comes back later, after them. The verifier must catch the reorder.
It uses no claim table (the sample worker's own ``applied`` list still keeps effects single).

The runner copies this file next to the deployed code and runs ``naive_consumer.handler`` instead
of the construct's entry point.
"""

from __future__ import annotations

import json
from typing import Any

import agent_worker  # type: ignore[import-not-found, unused-ignore]  # the deployed sample job code

from constructs_fifo.runtime import Job

__all__ = ["handler"]


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Run every record; list only the failed ones (the bug: the group is not stopped)."""
    failures = []
    for record in event["Records"]:
        body = json.loads(record["body"])
        job = Job(
            id=body["jobId"],
            group=record["attributes"]["MessageGroupId"],
            type=body["type"],
            payload=body.get("payload", {}),
            attempt=int(record["attributes"]["ApproximateReceiveCount"]),
            message_id=record["messageId"],
            body=body,
        )
        try:
            agent_worker.handle(job, context)
        except Exception:  # keeps going: exactly what an ordered consumer must not do
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
