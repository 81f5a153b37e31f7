"""A deliberately wrong consumer for the negative end-to-end test: it keeps going after a failure.

It runs every record of a batch and reports only the records that failed, like a plain batch
processor on a FIFO queue: when a job of a workspace fails, the workspace's later jobs in the same
batch are applied anyway and the failed one comes back later, after them. It applies each job to the
workspace's state with the runtime's own store (so the state is where the verifier reads it), but
ignores ``seq`` and the runtime's rules. The verifier must catch the reorder.

The runner copies this file next to the deployed code and runs ``naive_consumer.handler`` instead
of the construct's entry point.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import agent_worker  # type: ignore[import-not-found, unused-ignore]  # the deployed sample job code
import boto3

from constructs_fifo.runtime import Job
from constructs_fifo.runtime.constants import ENV_GROUP_TABLE
from constructs_fifo.runtime.state.storage.store import StateStore

__all__ = ["handler"]


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    """Run every record; list only the failed ones (the bug: the group is not stopped)."""
    store = StateStore(os.environ[ENV_GROUP_TABLE], boto3.client("dynamodb"))
    failures = []
    for record in event["Records"]:
        body = json.loads(record["body"])
        group = record["attributes"]["MessageGroupId"]
        job = Job(
            id=body["jobId"],
            group=group,
            type=body["type"],
            payload=body.get("payload", {}),
            attempt=int(record["attributes"]["ApproximateReceiveCount"]),
            message_id=record["messageId"],
            body=body,
        )
        try:
            current = store.load([group])[group]
            state = agent_worker.apply_job(job, current.state)
            if not store.commit(group, dataclasses.replace(current, state=state), current.version):
                raise RuntimeError(f"group {group} changed meanwhile")
        except Exception:  # keeps going: exactly what an ordered consumer must not do
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
