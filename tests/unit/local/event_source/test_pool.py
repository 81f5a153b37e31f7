"""A worker's environment is the function's, not this process's."""

from __future__ import annotations

from pathlib import Path

import pytest

from constructs_fifo.local.aws import FAKE_CREDENTIALS
from constructs_fifo.local.event_source.deployment import FunctionSettings
from constructs_fifo.local.event_source.pool import lambda_environment


def test_worker_environment_is_the_functions_not_this_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a variable of this process and a function environment
    monkeypatch.setenv("SOMETHING_PRIVATE", "1")
    function = FunctionSettings("fn", "arn:fn", "h.handle", 3, 512, {"TABLE": "claims"}, None, tmp_path)

    # WHEN the worker environment is built
    env = lambda_environment(
        function, region="eu-west-1", endpoint_url="http://localhost:1", credentials=FAKE_CREDENTIALS
    )

    # THEN it has the function's variables, Lambda's, the endpoint and the credentials; not ours
    assert env["TABLE"] == "claims"
    assert env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] == "512"
    assert env["AWS_ENDPOINT_URL"] == "http://localhost:1"
    assert env["AWS_REGION"] == "eu-west-1"
    assert env["AWS_ACCESS_KEY_ID"] == "testing"
    assert "SOMETHING_PRIVATE" not in env
