"""cli/json_output.py: one --json convention (camelCase keys, ISO-8601 times with the epoch beside)."""

from __future__ import annotations

from constructs_fifo.cli.json_output import Verbatim, camel_case, json_document


def test_keys_of_every_casing_become_camel_case_and_names_stay() -> None:
    # GIVEN keys in snake_case, PascalCase, camelCase, and names that are not identifiers
    # WHEN converted THEN identifiers are camelCase, names untouched
    assert [
        camel_case(k) for k in ["handler_errors", "Checks", "ReservedConcurrentExecutions", "lastSeq"]
    ] == [
        "handlerErrors",
        "checks",
        "reservedConcurrentExecutions",
        "lastSeq",
    ]
    assert [camel_case(k) for k in ["AgentJobs/Workspaces", "sqs.ReceiveMessage", "ws#42", "ARN"]] == [
        "AgentJobs/Workspaces",
        "sqs.ReceiveMessage",
        "ws#42",
        "arn",
    ]


def test_a_time_is_iso_with_its_epoch_ms_beside() -> None:
    # GIVEN times as epoch ms (snake and camel, with and without Ms), an ISO string, none, and a duration
    payload = {
        "lease_expires_at": 1764619200000,
        "updatedAtMs": 1764619200123,
        "gapOpenSinceMs": None,
        "deadAt": "2026-12-01T20:00:00+00:00",
        "leaseRemainingSeconds": 12.5,
        "durationMs": 40,
    }
    # WHEN converted
    document = json_document(payload)
    # THEN each time is two keys: ISO 8601 UTC and the epoch ms; durations stay numbers under their names
    assert document == {
        "leaseExpiresAt": "2025-12-01T20:00:00Z",
        "leaseExpiresAtEpochMs": 1764619200000,
        "updatedAt": "2025-12-01T20:00:00.123Z",
        "updatedAtEpochMs": 1764619200123,
        "gapOpenSince": None,
        "gapOpenSinceEpochMs": None,
        "deadAt": "2026-12-01T20:00:00Z",
        "deadAtEpochMs": 1796155200000,
        "leaseRemainingSeconds": 12.5,
        "durationMs": 40,
    }


def test_verbatim_values_and_nested_lists_are_kept_as_the_user_wrote_them() -> None:
    # GIVEN a user's state with snake_case keys inside a document WHEN converted THEN it is untouched
    state = {"tested_head": 2, "Patches": ["p1"]}
    document = json_document({"group_state": {"state": Verbatim(state)}, "rows": [{"dead_job_id": "j"}]})
    assert document == {"groupState": {"state": state}, "rows": [{"deadJobId": "j"}]}
