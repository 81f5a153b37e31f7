"""EventBridge Pipes' path semantics, as a pure core: JSON paths, dynamic target parameters, templates.

What the AWS pages state, and this module does:

- **The event** of a pipe with an SQS source is the SQS record (``messageId``, ``receiptHandle``,
  ``body``, ``attributes``, ``messageAttributes``, ``md5OfBody``, ``eventSource``, ``eventSourceARN``,
  ``awsRegion``); its ``body``, when valid JSON, is parsed before any path is evaluated, so
  ``$.body.detail.accountId`` reaches into the message (eb-pipes-input-transformation, "Implicit
  body data parsing"; eb-pipes-sqs). :func:`pipe_event` builds that view.
- **Paths** (:func:`resolve`): dot notation with alphanumerics, dashes, underscores and forward
  slashes, array indices (``[3]``) and wildcards (``*``, ``[*]``); nothing else of JSONPath
  (eb-pipes-input-transformation, "EventBridge does not support all JSON Path syntax").
- **Dynamic target parameters** (:func:`dynamic_parameter`): a parameter whose *whole* value is a
  path (``$.body.detail.accountId``) is replaced by the event's value there; a value that merely
  contains one is a literal; paths read the event, never the transformed input
  (eb-pipes-event-target, "Dynamic path parameters"). A path that resolves to nothing cannot give a
  MessageGroupId: :class:`PathNotFoundError`, and the record fails (the runner leaves it in the source).
- **Input templates** (:func:`render_template`): ``<$.path>`` and the reserved variables
  ``<aws.pipes.pipe-arn>``, ``pipe-name``, ``source-arn``, ``enrichment-arn``, ``target-arn``,
  ``event.ingestion-time``, ``event`` and ``event.json``. In a JSON template a string value outside
  quotes is quoted ("EventBridge Pipes automatically adds quotes to string variable values"), an
  object, array, number or boolean is written as JSON; inside a quoted string, an object or array
  loses its internal quotes (``{"key": "value"}`` becomes ``{key: value}``), as it does in a text
  template. A path that matches nothing "isn't created and won't appear in the output": it is
  replaced by nothing, and reported (:attr:`Rendered.missing`).

What no page states, and this module chooses (docs/emulator.md says so too): a number or boolean
given as a group or deduplication id is its JSON text (``3``, ``true``); an object or array, its
compact JSON; ``null`` counts as nothing. A string placed by a JSON template is JSON-escaped (the
page says values are not escaped, and that the output is valid JSON: the two differ only for a value
holding a quote or a backslash). A wildcard gives the list of what it matched.

Examples
--------
>>> event = pipe_event({"messageId": "m1", "body": '{"detail": {"accountId": "a1", "version": 3}}'})
>>> dynamic_parameter("$.body.detail.accountId", event)
'a1'
>>> render_template('{"group": <$.body.detail.accountId>, "seq": <$.body.detail.version>}', event).body
'{"group": "a1", "seq": 3}'
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "PathNotFoundError",
    "PathSyntaxError",
    "PipeContext",
    "Rendered",
    "dynamic_parameter",
    "is_path",
    "parse_path",
    "pipe_event",
    "render_template",
    "resolve",
]

#: A key in dot notation: alphanumerics, dashes, underscores, forward slashes (the page's list).
_KEY: Final = re.compile(r"[A-Za-z0-9_\-/]+")
#: A placeholder of a template: a path or a reserved variable between angle brackets.
_PLACEHOLDER: Final = re.compile(r"<(\$[^<>\s]*|aws\.pipes\.[a-z.\-]+)>")
#: The reserved variables (eb-pipes-input-transformation, "Reserved variables").
RESERVED_VARIABLES: Final = (
    "aws.pipes.pipe-arn",
    "aws.pipes.pipe-name",
    "aws.pipes.source-arn",
    "aws.pipes.enrichment-arn",
    "aws.pipes.target-arn",
    "aws.pipes.event.ingestion-time",
    "aws.pipes.event",
    "aws.pipes.event.json",
)
_WILDCARD: Final = "*"


class PathSyntaxError(ValueError):
    """A path outside the syntax Pipes supports; the message names the path, the rule and the fix."""


class PathNotFoundError(LookupError):
    """A dynamic parameter's path that resolves to nothing in the event (the record fails)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"path {path} resolves to nothing in the event")
        self.path = path


@dataclass(frozen=True, slots=True)
class PipeContext:
    """What the reserved variables read: the pipe, and when the input transformer got the event."""

    pipe_arn: str = ""
    pipe_name: str = ""
    source_arn: str = ""
    target_arn: str = ""
    enrichment_arn: str = ""
    ingestion_time: str = ""


@dataclass(frozen=True, slots=True)
class Rendered:
    """A rendered template: the text sent, and the paths that matched nothing (left out)."""

    body: str
    missing: tuple[str, ...] = field(default=())


def is_path(value: str) -> bool:
    """Whether a target parameter is a dynamic path: its whole value is ``$`` or starts with ``$.``/``$[``."""
    return value == "$" or value.startswith(("$.", "$["))


def parse_path(path: str) -> tuple[str | int, ...]:
    """The steps of ``path``: keys (str), indices (int) and wildcards (``"*"``).

    Raises
    ------
    PathSyntaxError
        For anything beyond dot notation, indices and wildcards.
    """
    if not path.startswith("$"):
        raise PathSyntaxError(
            f"path {path!r} does not start with '$'; Pipes paths start at the event's root "
            "(fix: write it as $.body.<field> for an SQS source)"
        )
    steps: list[str | int] = []
    rest = path[1:]
    while rest:
        if rest.startswith("."):
            match = _KEY.match(rest, 1) if rest[1:2] != _WILDCARD else None
            if rest[1:2] == _WILDCARD:
                steps.append(_WILDCARD)
                rest = rest[2:]
            elif match:
                steps.append(match.group())
                rest = rest[match.end() :]
            else:
                raise _syntax(path, rest)
        elif rest.startswith("["):
            close = rest.find("]")
            inner = rest[1:close] if close > 0 else ""
            if inner == _WILDCARD:
                steps.append(_WILDCARD)
            elif inner.isdigit():
                steps.append(int(inner))
            else:
                raise _syntax(path, rest)
            rest = rest[close + 1 :]
        else:
            raise _syntax(path, rest)
    return tuple(steps)


def _syntax(path: str, rest: str) -> PathSyntaxError:
    return PathSyntaxError(
        f"path {path!r} is not Pipes path syntax at {rest!r}; Pipes supports dot notation (alphanumerics, "
        "dashes, underscores, slashes), array indices and wildcards only (fix: write it as "
        "$.body.key, $.body.list[0] or $.body.list[*])"
    )


_NOTHING: Final = object()


def _step(values: list[Any], step: str | int) -> list[Any]:
    found: list[Any] = []
    for value in values:
        if step == _WILDCARD:
            if isinstance(value, Mapping):
                found.extend(value.values())
            elif isinstance(value, list):
                found.extend(value)
        elif isinstance(step, int):
            if isinstance(value, list) and step < len(value):
                found.append(value[step])
        elif isinstance(value, Mapping) and step in value:
            found.append(value[step])
    return found


def resolve(path: str, event: Any) -> Any:
    """The event's value at ``path`` (``None`` for a JSON ``null``); a wildcard gives the list it matched.

    Raises
    ------
    PathNotFoundError
        Nothing in the event matches ``path``.
    PathSyntaxError
        ``path`` is not Pipes syntax.
    """
    steps = parse_path(path)
    values = [event]
    for step in steps:
        values = _step(values, step)
    if not values:
        raise PathNotFoundError(path)
    return values if _WILDCARD in steps else values[0]


def pipe_event(record: Mapping[str, Any]) -> dict[str, Any]:
    """The event paths are evaluated against: the SQS record with its ``body`` parsed when it is JSON."""
    event = dict(record)
    body = event.get("body")
    if isinstance(body, str):
        # Not JSON: paths below $.body find nothing, and $.body is the text itself.
        with contextlib.suppress(ValueError):
            event["body"] = json.loads(body)
    return event


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def dynamic_parameter(value: str, event: Any) -> str:
    """A target parameter's value for one record: the event's value when ``value`` is a path, else itself.

    Raises
    ------
    PathNotFoundError
        The path resolves to nothing (or to ``null``).
    PathSyntaxError
        The path is not Pipes syntax.
    """
    if not is_path(value):
        return value
    found = resolve(value, event)
    if found is None:  # a JSON null gives no id either
        raise PathNotFoundError(value)
    return _as_text(found)


def _unquoted(value: Any) -> str:
    """An object or array as text, with its internal quotes removed (the page's ``{key: value}``)."""
    return json.dumps(value, separators=(", ", ": ")).replace('"', "")


def _reserved(name: str, context: PipeContext, record: Mapping[str, Any], event: Any) -> Any:
    return {
        "aws.pipes.pipe-arn": context.pipe_arn,
        "aws.pipes.pipe-name": context.pipe_name,
        "aws.pipes.source-arn": context.source_arn,
        "aws.pipes.enrichment-arn": context.enrichment_arn,
        "aws.pipes.target-arn": context.target_arn,
        "aws.pipes.event.ingestion-time": context.ingestion_time,
        "aws.pipes.event": dict(record),
        "aws.pipes.event.json": event,
    }.get(name, _NOTHING)


def _inside_strings(template: str) -> list[bool]:
    """For each character of a JSON template, whether it lies inside a quoted string."""
    inside: list[bool] = []
    quoted = escaped = False
    for char in template:
        inside.append(quoted)
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
    return inside


def _in_json(value: Any, quoted: bool) -> str:
    if isinstance(value, str):
        text = json.dumps(value)
        return text[1:-1] if quoted else text
    if isinstance(value, dict | list):
        return _unquoted(value) if quoted else json.dumps(value)
    return json.dumps(value)


def _in_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return _unquoted(value)
    return json.dumps(value)


def render_template(template: str, record: Mapping[str, Any], context: PipeContext | None = None) -> Rendered:
    """Render a pipe's ``InputTemplate`` for one SQS record (see the module docstring for the rules).

    ``record`` is the SQS record as received (``aws.pipes.event``); paths read :func:`pipe_event` of it.
    A template that starts with ``{`` or ``[`` is a JSON template; any other is text.
    """
    context = context or PipeContext()
    event = pipe_event(record)
    is_json = template.lstrip().startswith(("{", "["))
    inside = _inside_strings(template) if is_json else []
    pieces: list[str] = []
    missing: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(template):
        name = match.group(1)
        if name.startswith("$"):
            try:
                value = resolve(name, event)
            except PathNotFoundError:
                value = _NOTHING
                missing.append(name)
        else:
            value = _reserved(name, context, record, event)
            if value is _NOTHING:
                continue  # not a reserved variable: literal text
        pieces.append(template[last : match.start()])
        last = match.end()
        if value is _NOTHING:
            continue
        pieces.append(_in_json(value, inside[match.start()]) if is_json else _in_text(value))
    pieces.append(template[last:])
    return Rendered("".join(pieces), tuple(missing))
