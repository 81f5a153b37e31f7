"""paths.py: Pipes' path semantics, checked on the examples of the AWS pages.

eb-pipes-input-transformation (its SQS samples, the EC2 "Input transform example", "Implicit body
data parsing", "Common issues") and eb-pipes-event-target ("Dynamic path parameters").
"""

from __future__ import annotations

import json

import pytest

from constructs_fifo.local.pipes.paths import (
    PathNotFoundError,
    PathSyntaxError,
    PipeContext,
    dynamic_parameter,
    is_path,
    parse_path,
    pipe_event,
    render_template,
    resolve,
)

#: The page's sample EC2 event, as the body of an SQS record.
EC2_EVENT = {
    "version": "0",
    "id": "7bf73129-1428-4cd3-a780-95db273d1602",
    "detail-type": "EC2 Instance State-change Notification",
    "source": "aws.ec2",
    "account": "123456789012",
    "time": "2015-11-11T21:29:54Z",
    "region": "us-east-1",
    "resources": ["arn:aws:ec2:us-east-1:123456789012:instance/i-abcd1111"],
    "detail": {"instance-id": "i-0123456789", "state": "RUNNING"},
}
CONTEXT = PipeContext(
    pipe_arn="arn:aws:pipes:us-east-1:123456789012:pipe/example",
    pipe_name="example",
    source_arn="arn:aws:sqs:us-east-1:123456789012:staging",
    target_arn="arn:aws:sqs:us-east-1:123456789012:jobs.fifo",
    ingestion_time="2026-01-01T00:00:00.000Z",
)


def _record(body: object, **extra: object) -> dict[str, object]:
    text = body if isinstance(body, str) else json.dumps(body)
    return {
        "messageId": "059f36b4-87a3-44ab-83d2-661975830a7d",
        "receiptHandle": "AQEB...",
        "body": text,
        "attributes": {"ApproximateReceiveCount": "1", "SenderId": "AIDAIENQZJOLO23YVJ4VO"},
        "messageAttributes": {},
        "md5OfBody": "e4e68fb7bd0e697a0ae8f1bb342846b3",
        "eventSource": "aws:sqs",
        "eventSourceARN": CONTEXT.source_arn,
        "awsRegion": "us-east-1",
        **extra,
    }


def test_the_sqs_body_is_parsed_when_it_is_json_and_kept_as_text_otherwise() -> None:
    # GIVEN a JSON body and a plain-text body WHEN the pipe's event is built
    parsed = pipe_event(_record({"key": "value"}))
    text = pipe_event(_record("Test message."))
    # THEN paths reach into the JSON body; the text body is the text itself
    assert resolve("$.body.key", parsed) == "value"
    assert resolve("$.body", text) == "Test message."
    with pytest.raises(PathNotFoundError):
        resolve("$.body.key", text)


def test_paths_take_dot_notation_dashes_slashes_indices_and_wildcards_only() -> None:
    # GIVEN the syntax the page lists WHEN parsed THEN each step is a key, an index or a wildcard
    assert parse_path("$.detail.instance-id") == ("detail", "instance-id")
    assert parse_path("$.body.Records[3]") == ("body", "Records", 3)
    assert parse_path("$.body.a_b/c[*].*") == ("body", "a_b/c", "*", "*")
    # AND filters, slices and recursive descent are refused with the supported syntax as the fix
    for unsupported in ("$..id", "$.items[?(@.x)]", "$.items[0:2]", "detail.state"):
        with pytest.raises(PathSyntaxError, match="fix"):
            parse_path(unsupported)


def test_a_wildcard_gives_the_list_it_matched() -> None:
    event = pipe_event(_record({"items": [{"id": "a"}, {"id": "b"}]}))
    # WHEN a wildcard path is resolved THEN every match comes back, in order
    assert resolve("$.body.items[*].id", event) == ["a", "b"]


def test_a_dynamic_parameter_is_a_path_only_when_its_whole_value_is_one() -> None:
    # GIVEN the page's rule: "The entire value has to be a JSON path, not only part of it"
    event = pipe_event(_record(EC2_EVENT))
    # WHEN a whole-path value and a value that merely contains a path are evaluated
    # THEN the first is the event's value, the second a literal
    assert dynamic_parameter("$.body.detail.state", event) == "RUNNING"
    assert (
        dynamic_parameter("SELECT * FROM $.body.detail.state", event) == "SELECT * FROM $.body.detail.state"
    )
    assert not is_path("group-$.body.detail.state")


def test_a_dynamic_parameter_that_resolves_to_nothing_fails_the_record() -> None:
    event = pipe_event(_record({"detail": {"accountId": None}}))
    # WHEN the path is absent, or its value is null THEN there is no group id: the record fails
    with pytest.raises(PathNotFoundError, match=r"\$\.body\.detail\.workspaceId"):
        dynamic_parameter("$.body.detail.workspaceId", event)
    with pytest.raises(PathNotFoundError):
        dynamic_parameter("$.body.detail.accountId", event)


def test_numbers_and_objects_as_ids_are_their_json_text() -> None:
    event = pipe_event(_record({"detail": {"version": 3, "flag": True, "key": {"a": 1}}}))
    # WHEN non-string values give an id THEN their compact JSON text is used
    assert dynamic_parameter("$.body.detail.version", event) == "3"
    assert dynamic_parameter("$.body.detail.flag", event) == "true"
    assert dynamic_parameter("$.body.detail.key", event) == '{"a":1}'


def test_the_pages_input_transform_example_quotes_strings_and_keeps_the_event_as_json() -> None:
    # GIVEN the page's transformer over its sample event (the SQS body here, so paths go via $.body)
    template = (
        '{\n  "instance" : <$.body.detail.instance-id>,\n  "state": <$.body.detail.state>,\n'
        '  "pipeArn" : <aws.pipes.pipe-arn>,\n  "pipeName" : <aws.pipes.pipe-name>,\n'
        '  "originalEvent" : <aws.pipes.event.json>\n}'
    )
    record = _record(EC2_EVENT)
    # WHEN rendered
    rendered = render_template(template, record, CONTEXT)
    # THEN the output is the page's: strings quoted, the original event as JSON with its body parsed
    output = json.loads(rendered.body)
    assert output["instance"] == "i-0123456789"
    assert output["state"] == "RUNNING"
    assert output["pipeArn"] == CONTEXT.pipe_arn
    assert output["pipeName"] == "example"
    assert output["originalEvent"] == {**record, "body": EC2_EVENT}
    assert rendered.missing == ()


def test_quoted_string_variables_are_allowed_and_not_quoted_twice() -> None:
    # GIVEN "Quotes are not required for variables that represent strings. They are permitted"
    rendered = render_template('{"state": "<$.body.detail.state>"}', _record(EC2_EVENT), CONTEXT)
    # THEN the value is quoted once
    assert json.loads(rendered.body) == {"state": "RUNNING"}


def test_an_object_inside_a_string_loses_its_internal_quotes() -> None:
    # GIVEN the page's "Body is <$.body>" example WHEN rendered in a JSON string
    rendered = render_template('{"text": "Body is <$.body>"}', _record({"key": "value"}), CONTEXT)
    # THEN the object's quotes are removed so the string stays valid
    assert json.loads(rendered.body) == {"text": "Body is {key: value}"}


def test_the_sqs_body_alone_as_text_template_loses_its_quotes() -> None:
    # GIVEN "<$.body> for Amazon SQS ... {"key": "value"} will become {key: value}"
    rendered = render_template("<$.body>", _record({"key": "value"}), CONTEXT)
    # THEN the text is the unquoted object; wrapped in JSON it is valid JSON again
    assert rendered.body == "{key: value}"
    assert json.loads(render_template('{"data": <$.body>}', _record({"key": "value"})).body) == {
        "data": {"key": "value"}
    }


def test_the_pages_sqs_samples_static_and_dynamic_strings() -> None:
    record = _record("Test message.")
    # WHEN the page's static string, JSON path and dynamic string templates are rendered
    # THEN the static text is kept, the sender id inserted as is
    assert render_template("Hello, sender", record).body == "Hello, sender"
    assert render_template("<$.attributes.SenderId>", record).body == "AIDAIENQZJOLO23YVJ4VO"
    assert render_template("Hello, <$.attributes.SenderId>", record).body == "Hello, AIDAIENQZJOLO23YVJ4VO"


def test_array_items_and_reserved_times_in_a_dynamic_json_template() -> None:
    # GIVEN the page's bracket-notation example
    body = {"key": "k", "Records": [0, 1, 2, {"n": 3}]}
    template = '{"key1": "value1", "key2": <$.body.Records[3]>, "d": <aws.pipes.event.ingestion-time>}'
    # WHEN rendered THEN the array item is JSON and the ingestion time a quoted ISO 8601 string
    assert json.loads(render_template(template, _record(body), CONTEXT).body) == {
        "key1": "value1",
        "key2": {"n": 3},
        "d": "2026-01-01T00:00:00.000Z",
    }


def test_a_path_that_matches_nothing_is_left_out_and_reported() -> None:
    # GIVEN "If you specify a variable to match a JSON path that doesn't exist in the event, that
    # variable isn't created and won't appear in the output"
    rendered = render_template('{"seq": "<$.body.detail.version>", "v": 1}', _record({"detail": {}}))
    # THEN it is replaced by nothing, and named
    assert rendered.body == '{"seq": "", "v": 1}'
    assert rendered.missing == ("$.body.detail.version",)


def test_a_job_envelope_template_builds_the_producer_shape() -> None:
    # GIVEN an envelope template like the construct's ingress helper writes
    template = (
        '{"jobId": <$.body.id>, "jobType": "account.event", "group": <$.body.detail.accountId>, '
        '"seq": <$.body.detail.version>, "payload": <$.body.detail>}'
    )
    body = {"id": "e-1", "detail": {"accountId": "a1", "version": 7, "type": "account.suspended"}}
    # WHEN rendered THEN every field has its JSON type
    assert json.loads(render_template(template, _record(body)).body) == {
        "jobId": "e-1",
        "jobType": "account.event",
        "group": "a1",
        "seq": 7,
        "payload": body["detail"],
    }


def test_angle_brackets_that_are_no_placeholder_stay_text() -> None:
    rendered = render_template('{"rule": "a <b> c", "x": <aws.pipes.unknown>}', _record({}))
    assert rendered.body == '{"rule": "a <b> c", "x": <aws.pipes.unknown>}'
