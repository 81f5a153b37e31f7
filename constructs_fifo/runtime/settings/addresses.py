"""The names by which a client finds a queue, written by the construct: stack outputs, environment.

The construct writes them (its stack outputs, and ``grant_client``'s environment variables) and the
client reads them (:mod:`constructs_fifo.client.queue.addresses`): both import them from here, the floor
below both, so they are defined once.
"""

from __future__ import annotations

import re
from typing import Final

from constructs_fifo.runtime.payloads.pointer import ENV_PAYLOAD_BUCKET
from constructs_fifo.runtime.settings.spec import SETTINGS

__all__ = [
    "ADDRESS_OUTPUTS",
    "CLIENT_NAME_RULE",
    "OUTPUTS_ID",
    "OUTPUT_DESCRIPTION_PREFIX",
    "client_variables",
    "is_client_name",
]

#: The construct id of the outputs' scope (a child of the queue construct): in every output key of the
#: construct, before the output's name (``NotificationsOutputsQueueUrl``).
OUTPUTS_ID: Final = "Outputs"
#: What every output's description starts with, before the construct's path and a colon.
OUTPUT_DESCRIPTION_PREFIX: Final = "OrderedAgentQueue "
#: The construct's outputs a client reads (their logical ids end with these names), by address field.
ADDRESS_OUTPUTS: Final = {
    "queue_url": "QueueUrl",
    "dead_letter_queue_url": "DeadLetterQueueUrl",
    "claim_table": "ClaimTableName",
    "group_table": "GroupTableName",
    "payload_bucket": "PayloadBucketName",
}
#: What a client's name (``grant_client(fn, name=...)``) may be: it goes into variable names.
CLIENT_NAME_RULE: Final = "a letter followed by letters, digits and underscores, e.g. 'fast_tools'"

_PREFIX: Final = "CONSTRUCTS_FIFO_"
_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
#: The address fields, by the settings row whose variable carries each (the runtime's own).
_ROWS: Final = {
    "queue_url": "queue_url",
    "claim_table": "claim_table",
    "group_table": "group_table",
    "dead_letter_queue_url": "dead_letter_queue_url",
}


def is_client_name(name: str) -> bool:
    """Whether ``name`` follows :data:`CLIENT_NAME_RULE`."""
    return bool(_NAME.fullmatch(name))


def client_variables(name: str | None = None) -> dict[str, str]:
    """The environment variables of a queue's address, by address field.

    Without a name, the runtime's own variables (so a queue's consumer can reach its own queue); with
    one, the same names with it after the prefix. ``name`` must follow :data:`CLIENT_NAME_RULE`
    (checked by the callers, which raise their own errors).

    Examples
    --------
    >>> client_variables()["queue_url"]
    'CONSTRUCTS_FIFO_QUEUE_URL'
    >>> client_variables("fast_tools")["claim_table"]
    'CONSTRUCTS_FIFO_FAST_TOOLS_CLAIM_TABLE'
    """
    own = {field: SETTINGS[row].variable() for field, row in _ROWS.items()}
    own["payload_bucket"] = ENV_PAYLOAD_BUCKET  # large_payloads=True: not a row (the construct names it)
    if name is None:
        return own
    return {
        field: f"{_PREFIX}{name.upper()}_{variable.removeprefix(_PREFIX)}" for field, variable in own.items()
    }
