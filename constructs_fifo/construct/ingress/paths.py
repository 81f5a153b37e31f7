"""The event paths and expressions an ingress names, checked, and the job envelope built from them.

Two languages, one envelope. The envelope is the JSON body :class:`~constructs_fifo.client.JobProducer`
sends and the runtime parses (``{"jobId", "type", "payload", "seq"}``, ``seq`` only when the event has
one), so a job that came in from an event runs, dies and is triaged like any other:

- **EventBridge Pipes** read an event with JSON paths (``$.detail.accountId``). For an SQS source the
  event is the queue's record, whose JSON body Pipes parses: a path of the event becomes
  ``$.body.detail.accountId`` (:func:`pipe_path`). The pipe's ``InputTemplate`` quotes a placeholder
  of a string and leaves a number or an object bare (EventBridge Pipes: eb-pipes-input-transformation);
  the target's ``MessageGroupId`` and ``MessageDeduplicationId`` are each one whole path
  (eb-pipes-event-target).
- **The Custom Event Bus** (``AWS::EventsV2``) reads an event with JSONata, which sees it as
  ``$events`` with ``Data``, ``Metadata`` and ``SystemMetadata`` (EventBridge: eb-custom-bus-transform);
  an expression is written between ``{%`` and ``%}`` (:func:`jsonata`).

The checks collect every problem of a call; each names the prop, its value, the rule and the fix.
Unresolved CDK tokens are skipped (they are checked by the service at deploy).
"""

from __future__ import annotations

import json
import re
from typing import Final

from constructs_fifo.construct.settings import tokens

__all__ = [
    "ENVELOPE_JOB_ID",
    "ENVELOPE_PAYLOAD",
    "ENVELOPE_SEQ",
    "ENVELOPE_TYPE",
    "EVENT_ID_EXPRESSION",
    "EVENT_ID_PATH",
    "EVENT_PAYLOAD_PATH",
    "MAX_PIPE_ID_PATH_LENGTH",
    "TRIAGE_ATTRIBUTES",
    "check_expression",
    "check_job_type",
    "check_path",
    "envelope_jsonata",
    "input_template",
    "jsonata",
    "pipe_path",
]

#: The envelope's fields, as :func:`constructs_fifo.client.producer.build_body` writes them.
ENVELOPE_JOB_ID: Final = "jobId"
ENVELOPE_TYPE: Final = "type"
ENVELOPE_PAYLOAD: Final = "payload"
ENVELOPE_SEQ: Final = "seq"
#: The message attributes every job carries for triage, as ``JobProducer`` sends them.
TRIAGE_ATTRIBUTES: Final = ("jobId", "jobType", "group")

#: An EventBridge event's own id: unique per event, the same on every retry of its delivery.
EVENT_ID_PATH: Final = "$.id"
#: What a job's payload is by default: the event's ``detail``.
EVENT_PAYLOAD_PATH: Final = "$.detail"
#: The Custom Event Bus's id of an accepted event (stable across retries), in JSONata.
EVENT_ID_EXPRESSION: Final = "$events.SystemMetadata.`aws:EventId`"

#: The JSON path syntax EventBridge evaluates (eb-pipes-input-transformation): dot notation with
#: letters, digits, dashes, underscores and forward slashes, and array indices. Wildcards are left
#: out: a group, an id, a type or a seq is one value.
_PATH: Final = re.compile(r"\$(?:\.[A-Za-z0-9_/-]+|\[[0-9]+\])+")
_PATH_RULE: Final = (
    "a JSON path of the event: '$.' then dot-separated names of letters, digits, '-', '_' or '/', "
    "or array indices like [0]; no spaces, no wildcards"
)
#: A job type written into the template as a literal: what could end the literal or open a
#: placeholder is refused.
_TYPE_FORBIDDEN: Final = frozenset('<>"\\{}%')
#: The longest ``MessageGroupId`` and ``MessageDeduplicationId`` a pipe's SQS target takes: the path
#: itself, ``$.body`` included (API_PipeTargetSqsQueueParameters: length 0 to 100).
MAX_PIPE_ID_PATH_LENGTH: Final = 100
_JSONATA_DELIMITERS: Final = ("{%", "%}")


def check_path(prop: str, value: object, *, whole_event: bool = False, target_id: bool = False) -> list[str]:
    """The problems of one JSON path prop (``[]`` when it is valid or an unresolved token).

    Parameters
    ----------
    prop
        The prop's name, for the message.
    value
        The path, e.g. ``$.detail.accountId``.
    whole_event
        Whether ``$`` alone (the whole event) is allowed, as it is for the payload.
    target_id
        Whether the path is a pipe target's group or deduplication id, whose pipe path is at most
        :data:`MAX_PIPE_ID_PATH_LENGTH` characters.

    Examples
    --------
    >>> check_path("group_path", "$.detail.accountId")
    []
    >>> check_path("group_path", "detail.accountId")[0].split(":")[0]
    "group_path='detail.accountId' is not allowed"
    """
    if tokens.is_unresolved(value):
        return []
    if isinstance(value, str) and (_PATH.fullmatch(value) or (whole_event and value == "$")):
        if target_id and len(pipe_path(value)) > MAX_PIPE_ID_PATH_LENGTH:
            return [
                f"{prop}={value!r} is too long: the pipe reads it as {pipe_path(value)!r}, "
                f"{len(pipe_path(value))} characters, and a pipe's SQS target takes at most "
                f"{MAX_PIPE_ID_PATH_LENGTH}. Fix: a shorter path (move the field up in the event's detail)."
            ]
        return []
    whole = " (or '$' for the whole event)" if whole_event else ""
    return [
        f"{prop}={value!r} is not allowed: it must be {_PATH_RULE}{whole}. "
        f"Fix: name the field of the event, e.g. {prop}='$.detail.accountId'."
    ]


def check_expression(prop: str, value: object) -> list[str]:
    """The problems of one JSONata expression prop: a non-empty string, written without delimiters.

    Examples
    --------
    >>> check_expression("group_expression", "$events.Data.accountId")
    []
    """
    if tokens.is_unresolved(value):
        return []
    if not isinstance(value, str) or not value.strip():
        return [
            f"{prop}={value!r} is not allowed: it must be a non-empty JSONata expression over $events. "
            f"Fix: e.g. {prop}='$events.Data.detail.accountId'."
        ]
    if any(delimiter in value for delimiter in _JSONATA_DELIMITERS):
        return [
            f"{prop}={value!r} is not allowed: write the expression without '{{%' and '%}}' (the "
            f"construct adds them). Fix: {prop}={value.replace('{%', '').replace('%}', '').strip()!r}."
        ]
    return []


def check_job_type(
    job_type: object, job_type_source: object, *, source_prop: str, check_source: list[str]
) -> list[str]:
    """The problems of the job type: exactly one of a literal and a path (or expression).

    ``check_source`` holds the problems of ``job_type_source`` already found by its own check.
    """
    if (job_type is None) == (job_type_source is None):
        return [
            f"job_type={job_type!r} and {source_prop}={job_type_source!r}: exactly one is needed, the "
            f"job type every event becomes, or where each event holds its type. Fix: pass "
            f"job_type='account_event', or {source_prop} naming the event's type field."
        ]
    if job_type_source is not None:
        return check_source
    if tokens.is_unresolved(job_type):
        return []
    if not isinstance(job_type, str) or not job_type or _TYPE_FORBIDDEN & set(job_type):
        return [
            f"job_type={job_type!r} is not allowed: it must be a non-empty string without any of "
            f"{''.join(sorted(_TYPE_FORBIDDEN))} (it is written into the template as a literal). "
            "Fix: name what the job does, e.g. job_type='account_event'."
        ]
    return []


def pipe_path(path: str) -> str:
    """The path of an event's field in a pipe whose source is the SQS queue the event was staged in.

    Examples
    --------
    >>> pipe_path("$.detail.accountId")
    '$.body.detail.accountId'
    >>> pipe_path("$")
    '$.body'
    """
    return "$.body" + path[1:]


def input_template(
    *,
    job_id_path: str,
    job_type: str | None,
    job_type_path: str | None,
    payload_path: str,
    seq_path: str | None,
) -> str:
    """The pipe's ``InputTemplate``: the job envelope, each field a placeholder of the staged event.

    String fields (``jobId``, a ``type`` read from the event) are quoted placeholders; the payload
    and ``seq`` are bare, so an object stays an object and a number a number (the runtime refuses a
    ``seq`` that is not an integer).

    Examples
    --------
    >>> input_template(job_id_path="$.id", job_type="usage", job_type_path=None,
    ...                payload_path="$.detail", seq_path="$.detail.version")
    '{"jobId": "<$.body.id>", "type": "usage", "payload": <$.body.detail>, "seq": <$.body.detail.version>}'
    """
    type_value = json.dumps(job_type) if job_type_path is None else f'"<{pipe_path(job_type_path)}>"'
    fields = [
        f'"{ENVELOPE_JOB_ID}": "<{pipe_path(job_id_path)}>"',
        f'"{ENVELOPE_TYPE}": {type_value}',
        f'"{ENVELOPE_PAYLOAD}": <{pipe_path(payload_path)}>',
    ]
    if seq_path is not None:
        fields.append(f'"{ENVELOPE_SEQ}": <{pipe_path(seq_path)}>')
    return "{" + ", ".join(fields) + "}"


def jsonata(expression: str) -> str:
    """``expression`` between the JSONata delimiters the Custom Event Bus reads.

    Examples
    --------
    >>> jsonata("$events.Data.accountId")
    '{% $events.Data.accountId %}'
    """
    return f"{_JSONATA_DELIMITERS[0]} {expression} {_JSONATA_DELIMITERS[1]}"


def envelope_jsonata(
    *,
    job_id_expression: str,
    job_type: str | None,
    job_type_expression: str | None,
    payload_expression: str,
    seq_expression: str | None,
) -> str:
    """The subscriber's JSONata transformer: the job envelope as one JSONata object constructor.

    Examples
    --------
    >>> envelope_jsonata(job_id_expression="$events.Data.id", job_type="usage", job_type_expression=None,
    ...                  payload_expression="$events.Data.detail", seq_expression=None)
    '{% {"jobId": $events.Data.id, "type": "usage", "payload": $events.Data.detail} %}'
    """
    type_value = json.dumps(job_type) if job_type_expression is None else _grouped(job_type_expression)
    fields = [
        f'"{ENVELOPE_JOB_ID}": {_grouped(job_id_expression)}',
        f'"{ENVELOPE_TYPE}": {type_value}',
        f'"{ENVELOPE_PAYLOAD}": {_grouped(payload_expression)}',
    ]
    if seq_expression is not None:
        fields.append(f'"{ENVELOPE_SEQ}": {_grouped(seq_expression)}')
    return jsonata("{" + ", ".join(fields) + "}")


def _grouped(expression: str) -> str:
    """A plain path stays as written; anything else is parenthesised, so commas cannot split it."""
    return expression if re.fullmatch(r"[$A-Za-z0-9_.`:-]+", expression) else f"({expression})"
