"""Where a queue's parts are, found by name: the stack's outputs, or the environment a grant set.

A client for one ``OrderedAgentQueue`` needs its queue URL and its tables' names. Nobody should copy
them by hand: :func:`from_outputs` reads them from the stack outputs the construct writes (one
``DescribeStacks``), and :func:`from_environment` from the variables its ``grant_client`` sets on a
function or a container. The names both use are defined once, in
:mod:`constructs_fifo.runtime.settings.addresses`, which the construct writes them from.

**Stack outputs.** Each output's description starts ``OrderedAgentQueue <construct path>:`` and its
key ends with the output's name (``NotificationsOutputsQueueUrl``): a queue is named by its construct
path, full (``McpTools/FastTools``) or inside its stack (``FastTools``), its last part, or its SQS
queue name; a stack with one queue needs no name.

**Environment.** ``grant_client(fn)`` sets the runtime's own variables (``CONSTRUCTS_FIFO_QUEUE_URL``,
``CONSTRUCTS_FIFO_CLAIM_TABLE``, ``CONSTRUCTS_FIFO_GROUP_TABLE``, ``CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL``:
so a queue's own consumer can reach its queue with no grant at all), and ``grant_client(fn,
name="fast_tools")`` the same names with the name after the prefix (``CONSTRUCTS_FIFO_FAST_TOOLS_QUEUE_URL``),
for a function that talks to several queues.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from constructs_fifo.client.errors import QueueLookupError
from constructs_fifo.runtime.settings.addresses import (
    ADDRESS_OUTPUTS,
    CLIENT_NAME_RULE,
    OUTPUT_DESCRIPTION_PREFIX,
    OUTPUTS_ID,
    client_variables,
    is_client_name,
)

__all__ = ["QueueAddress", "from_environment", "from_outputs"]


@dataclass(frozen=True, slots=True)
class QueueAddress:
    """Where one queue's parts are (a table is ``None`` when the queue's mode and policy build none)."""

    queue_url: str
    claim_table: str | None = None
    group_table: str | None = None
    dead_letter_queue_url: str | None = None
    #: The payload bucket (``large_payloads=True``): bodies over 1 MiB and results over 64 KiB go there.
    payload_bucket: str | None = None
    #: Where it was found, for messages (``stack McpTools, queue McpTools/FastTools``).
    source: str = ""


def from_environment(environ: Mapping[str, str], name: str | None = None) -> QueueAddress:
    """The address ``grant_client`` set in the environment (see the module docstring).

    Raises
    ------
    QueueLookupError
        The queue's URL variable is not set.
    """
    if name is not None and not is_client_name(name):
        raise QueueLookupError(
            f"client name {name!r} is not allowed: it becomes part of environment variable names. "
            f"Fix: use {CLIENT_NAME_RULE}."
        )
    variables = client_variables(name)
    values = {field: environ.get(variable) or None for field, variable in variables.items()}
    queue_url = values.pop("queue_url")
    if not queue_url:
        grant = f"queue.grant_client(fn, name={name!r})" if name else "queue.grant_client(fn)"
        raise QueueLookupError(
            f"{variables['queue_url']} is not set, so the queue's address is unknown. Fix: give the "
            f"function or container access in the app ({grant}, which sets it), or build the client "
            "with QueueClient.from_stack(stack, queue)."
        )
    return QueueAddress(queue_url, source=f"environment {variables['queue_url']}", **values)


def from_outputs(stack: str, outputs: Iterable[Mapping[str, Any]], queue: str | None = None) -> QueueAddress:
    """The address of ``queue`` among a stack's outputs (``DescribeStacks``' ``Outputs``).

    Raises
    ------
    QueueLookupError
        No queue of that name (the message lists those there), or several and no name.
    """
    queues = _queues(outputs)
    if not queues:
        raise QueueLookupError(
            f"stack {stack!r} has no OrderedAgentQueue outputs. Fix: check the stack's name and region; "
            "a queue built with outputs=False writes none: pass its address (QueueClient(queue_url=..., "
            "claim_table=..., group_table=...)) or use grant_client and QueueClient.from_environment()."
        )
    if queue is None:
        if len(queues) == 1:
            [(path, found)] = queues.items()
            return _address(stack, path, found)
        raise QueueLookupError(
            f"stack {stack!r} holds {len(queues)} queues ({', '.join(sorted(queues))}). Fix: name one, "
            "e.g. QueueClient.from_stack(stack, queue='<construct path inside the stack>')."
        )
    inside = {path: path.split("/", 1)[1] if "/" in path else path for path in queues}
    matches = [
        path
        for path, found in queues.items()
        if queue in (path, inside[path], path.rsplit("/", 1)[-1], found.get("queue_name"))
    ]
    if len(matches) != 1:
        how = "matches none" if not matches else f"matches several ({', '.join(sorted(matches))})"
        raise QueueLookupError(
            f"queue {queue!r} {how} of stack {stack!r}'s queues: {', '.join(sorted(inside.values()))}. "
            "Fix: name it by its construct path inside the stack, as listed."
        )
    return _address(stack, matches[0], queues[matches[0]])


def _queues(outputs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """The construct's outputs, by the queue's construct path, then by :class:`QueueAddress` field."""
    fields = {name: field for field, name in ADDRESS_OUTPUTS.items()}
    queues: dict[str, dict[str, str]] = {}
    for output in outputs:
        description = str(output.get("Description") or "")
        key = str(output.get("OutputKey") or "")
        if not description.startswith(OUTPUT_DESCRIPTION_PREFIX) or ":" not in description:
            continue
        path = description[len(OUTPUT_DESCRIPTION_PREFIX) :].split(":", 1)[0]
        field = fields.get(key.rsplit(OUTPUTS_ID, 1)[-1])  # the key is <path>Outputs<name>
        if field is not None:
            queues.setdefault(path, {})[field] = str(output.get("OutputValue") or "")
    return {path: found for path, found in queues.items() if found.get("queue_url")}


def _address(stack: str, path: str, found: Mapping[str, str]) -> QueueAddress:
    return QueueAddress(
        found["queue_url"],
        claim_table=found.get("claim_table") or None,
        group_table=found.get("group_table") or None,
        dead_letter_queue_url=found.get("dead_letter_queue_url") or None,
        payload_bucket=found.get("payload_bucket") or None,
        source=f"stack {stack!r}, queue {path}",
    )
