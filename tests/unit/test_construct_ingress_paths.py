"""The ingress's paths and expressions: what is refused (with the fix), and the envelope they build,
which the runtime must parse into the job the event meant."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from constructs_fifo.client.producer import JobMessage, build_body, message_attributes
from constructs_fifo.construct.ingress import paths
from constructs_fifo.runtime.job import parse_record

#: An event as EventBridge delivers it to the staging queue (the record body), seed 004's usage event.
EVENT: dict[str, Any] = {
    "version": "0",
    "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
    "detail-type": "AccountUsage",
    "source": "accounts",
    "account": "111122223333",
    "time": "2026-12-01T12:00:00Z",
    "region": "eu-west-1",
    "resources": [],
    "detail": {"accountId": "acct-42", "version": 7, "units": 3},
}
_PLACEHOLDER = re.compile(r'"<(\$[^>]*)>"|<(\$[^>]*)>')


def _lookup(record: dict[str, Any], path: str) -> Any:
    value: Any = record
    for name in path[2:].split("."):
        value = value[name]
    return value


def fill_pipe_template(template: str, record: dict[str, Any]) -> str:
    """What EventBridge Pipes does with an ``InputTemplate`` (eb-pipes-input-transformation): a quoted
    placeholder becomes the value as a JSON string, a bare one the value's JSON."""

    def replace(match: re.Match[str]) -> str:
        quoted, bare = match.groups()
        value = _lookup(record, quoted or bare)
        return json.dumps(str(value)) if quoted else json.dumps(value)

    return _PLACEHOLDER.sub(replace, template)


@pytest.mark.parametrize("path", ["$.detail.accountId", "$.detail-type", "$.id", "$.resources[0]", "$.a/b_c"])
def test_a_path_of_the_event_is_accepted(path: str) -> None:
    assert paths.check_path("group_path", path) == []


@pytest.mark.parametrize(
    "path", ["detail.accountId", "$", "$.detail.account id", "$.detail.*", "", "$.", 7, "$..x"]
)
def test_anything_else_is_refused_naming_the_prop_the_value_the_rule_and_the_fix(path: object) -> None:
    # WHEN a path that is not one field of the event is checked
    problems = paths.check_path("group_path", path)
    # THEN one problem names the prop and value, the rule and the fix
    assert len(problems) == 1
    assert problems[0].startswith(f"group_path={path!r} is not allowed: it must be a JSON path")
    assert "Fix: name the field of the event, e.g. group_path='$.detail.accountId'." in problems[0]


def test_a_group_path_longer_than_a_pipe_target_takes_is_refused() -> None:
    # GIVEN a path whose pipe path ($.body + the path) is 101 characters
    path = "$." + "a" * (paths.MAX_PIPE_ID_PATH_LENGTH - len("$.body."))
    assert len(paths.pipe_path(path)) == paths.MAX_PIPE_ID_PATH_LENGTH
    longer = path + "b"
    # THEN the longest that fits passes and one more character is refused, naming the limit
    assert paths.check_path("group_path", path, target_id=True) == []
    (problem,) = paths.check_path("group_path", longer, target_id=True)
    assert problem.startswith(f"group_path={longer!r} is too long: the pipe reads it as")
    assert "101 characters, and a pipe's SQS target takes at most 100" in problem
    # AND a path that is no target id (the job id, inside the template) has no such limit
    assert paths.check_path("job_id_path", longer) == []


def test_the_payload_may_be_the_whole_event() -> None:
    assert paths.check_path("payload_path", "$", whole_event=True) == []
    assert paths.check_path("group_path", "$") != []


def test_an_unresolved_token_is_left_to_the_service() -> None:
    assert paths.check_path("group_path", "${Token[TOKEN.123]}") == []


def test_the_job_type_is_one_literal_or_one_path() -> None:
    both = paths.check_job_type("t", "$.x", source_prop="job_type_path", check_source=[])
    neither = paths.check_job_type(None, None, source_prop="job_type_path", check_source=[])
    assert both[0].startswith("job_type='t' and job_type_path='$.x': exactly one is needed")
    assert neither[0].startswith("job_type=None and job_type_path=None: exactly one is needed")
    assert paths.check_job_type("usage", None, source_prop="job_type_path", check_source=[]) == []
    assert paths.check_job_type('a"b', None, source_prop="job_type_path", check_source=[])[0].startswith(
        "job_type='a\"b' is not allowed"
    )


def test_an_expression_is_written_without_its_delimiters() -> None:
    assert paths.check_expression("group_expression", "$events.Data.accountId") == []
    problem = paths.check_expression("group_expression", "{% $events.Data.accountId %}")
    assert problem == [
        "group_expression='{% $events.Data.accountId %}' is not allowed: write the expression without "
        "'{%' and '%}' (the construct adds them). Fix: group_expression='$events.Data.accountId'."
    ]
    assert paths.check_expression("group_expression", " ")[0].startswith(
        "group_expression=' ' is not allowed"
    )


def test_the_pipes_envelope_is_the_job_the_producer_would_have_sent() -> None:
    # GIVEN the pipe's template for a state-mode job: type from the event, seq its version
    template = paths.input_template(
        job_id_path="$.id",
        job_type=None,
        job_type_path="$.detail-type",
        payload_path="$.detail",
        seq_path="$.detail.version",
    )
    # WHEN Pipes fills it from the staged record (whose JSON body it parses)
    body = fill_pipe_template(template, {"body": EVENT})
    # THEN the runtime parses the job the producer would have sent for that event
    job = parse_record({"messageId": "m-1", "body": body, "attributes": {"MessageGroupId": "acct-42"}})
    expected = JobMessage(EVENT["id"], "AccountUsage", EVENT["detail"], group="acct-42", seq=7)
    assert (job.id, job.type, job.payload, job.body.get("seq")) == (
        EVENT["id"],
        "AccountUsage",
        EVENT["detail"],
        7,
    )
    assert job.group == "acct-42"
    assert json.loads(body) == json.loads(build_body(expected))


def test_without_a_seq_path_the_envelope_has_no_seq_and_a_literal_type() -> None:
    template = paths.input_template(
        job_id_path="$.id", job_type="usage", job_type_path=None, payload_path="$", seq_path=None
    )
    assert json.loads(fill_pipe_template(template, {"body": EVENT})) == {
        "jobId": EVENT["id"],
        "type": "usage",
        "payload": EVENT,
    }


def test_the_subscribers_envelope_names_the_same_fields() -> None:
    expression = paths.envelope_jsonata(
        job_id_expression=paths.EVENT_ID_EXPRESSION,
        job_type=None,
        job_type_expression="$events.Data.`detail-type`",
        payload_expression="$events.Data.detail",
        seq_expression="$events.Data.detail.version",
    )
    assert expression == (
        '{% {"jobId": $events.SystemMetadata.`aws:EventId`, "type": $events.Data.`detail-type`, '
        '"payload": $events.Data.detail, "seq": $events.Data.detail.version} %}'
    )
    # A compound expression is parenthesised, so its commas stay inside its field
    assert '"seq": ($number($events.Data.v, 10))}' in paths.envelope_jsonata(
        job_id_expression="$events.Data.id",
        job_type="t",
        job_type_expression=None,
        payload_expression="$events.Data",
        seq_expression="$number($events.Data.v, 10)",
    )


def test_the_triage_attributes_are_the_producers() -> None:
    assert tuple(message_attributes(JobMessage("j", "t", {}, group="g"))) == paths.TRIAGE_ATTRIBUTES
