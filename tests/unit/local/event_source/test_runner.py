"""The runner's concurrency: the smaller deployed limit, and a disabled mapping is not polled."""

from __future__ import annotations

from pathlib import Path

import pytest

from constructs_fifo.local.event_source.deployment import (
    DeployedFunction,
    Deployment,
    MappingSettings,
    QueueSettings,
)
from constructs_fifo.local.event_source.runner import DEFAULT_CONCURRENCY, EventSourceRunner
from constructs_fifo.stacks.aws import AwsTarget

ARN = "arn:aws:sqs:eu-west-1:123456789012:jobs.fifo"
TARGET = AwsTarget("http://localhost:1", "eu-west-1", fake_credentials=True)


def _runner(
    max_concurrency: int | None, reserved: int | None, tmp_path: Path, *, state: str = "Enabled"
) -> EventSourceRunner:
    function = DeployedFunction("fn", "arn:fn", "h.handle", 3, 128, {}, reserved, tmp_path)
    mapping = MappingSettings("u", ARN, 10, max_concurrency, True, state == "Enabled", state)
    queue = QueueSettings("http://q/jobs.fifo", ARN, 18, 5, None)
    return EventSourceRunner(
        Deployment(function, mapping, queue),
        target=TARGET,
        sqs_client=None,
        log_path=tmp_path / "log",
    )


@pytest.mark.parametrize(
    ("max_concurrency", "reserved", "expected"),
    [(None, None, DEFAULT_CONCURRENCY), (3, None, 3), (None, 4, 4), (3, 4, 3), (8, 2, 2)],
)
def test_concurrency_is_the_smaller_deployed_limit(
    max_concurrency: int | None, reserved: int | None, expected: int, tmp_path: Path
) -> None:
    # GIVEN a mapping and function limit WHEN a runner is built THEN it runs that many slots
    runner = _runner(max_concurrency, reserved, tmp_path)
    try:
        assert runner.concurrency == expected
    finally:
        runner.close()


def test_a_disabled_mapping_is_not_polled_and_the_stats_say_why(tmp_path: Path) -> None:
    # GIVEN a runner whose mapping is disabled (and no SQS client: any call would fail)
    with _runner(None, None, tmp_path, state="Disabled") as runner:
        # WHEN it drains
        stats = runner.drain(until_empty=True)
    # THEN nothing ran and the reason names the mapping, its state and the fix
    assert (stats.batches, stats.records) == (0, 0)
    assert stats.skipped is not None
    assert "event source mapping u of function fn is Disabled" in stats.skipped
    assert (
        "enable it (`aws lambda update-event-source-mapping --uuid u --enabled --region eu-west-1 "
        "--endpoint-url http://localhost:1`)" in stats.skipped
    )
    assert stats.as_dict()["skipped"] == stats.skipped


def test_workers_act_as_the_target_with_its_credentials(tmp_path: Path) -> None:
    # GIVEN a runner for an emulator with fake credentials WHEN its workers' environment is built
    with _runner(None, None, tmp_path) as runner:
        env = runner.worker_environment()
    # THEN they call the target's endpoint, in its region, with its credentials
    assert env["AWS_ENDPOINT_URL"] == "http://localhost:1"
    assert env["AWS_REGION"] == "eu-west-1"
    assert env["AWS_ACCESS_KEY_ID"] == "testing"
