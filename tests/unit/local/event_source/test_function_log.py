"""The function log of a drain: one file per function, emptied at start and when too large, kept."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from constructs_fifo.local.aws import AwsTarget
from constructs_fifo.local.event_source import function_log
from constructs_fifo.local.event_source.deployment import (
    DeployedFunction,
    Deployment,
    MappingSettings,
    QueueSettings,
)
from constructs_fifo.local.event_source.function_log import LOG_FILES_KEPT, FunctionLog, default_log_path
from constructs_fifo.local.event_source.runner import EventSourceRunner

ARN = "arn:aws:sqs:eu-west-1:123456789012:jobs.fifo"
TARGET = AwsTarget("http://localhost:1", "eu-west-1", fake_credentials=True)


def test_the_function_log_is_named_per_function_emptied_at_start_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the temporary directory here, and a log of an earlier drain of the same function
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    log = default_log_path("fn")
    log.parent.mkdir()
    log.write_text("an earlier drain's lines\n")
    function = DeployedFunction("fn", "arn:fn", "h.handle", 3, 128, {}, None, tmp_path)
    mapping = MappingSettings("u", ARN, 10, None, True, True, "Enabled")
    queue = QueueSettings("http://q/jobs.fifo", ARN, 18, 5, None)
    # WHEN a runner starts without a log path, then closes
    with EventSourceRunner(Deployment(function, mapping, queue), target=TARGET) as runner:
        path = runner.log_path
    # THEN its log is <temp>/constructs-fifo/<function>.log, one per function, emptied, and kept
    assert path == tmp_path / "constructs-fifo" / "fn.log"
    assert path.read_text() == ""
    assert [p.name for p in path.parent.iterdir()] == ["fn.log"]


def test_the_log_directory_keeps_the_newest_logs_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the logs of as many earlier functions as the directory keeps, the oldest first
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    directory = default_log_path("x").parent
    directory.mkdir()
    for age in range(LOG_FILES_KEPT):
        old = directory / f"old-{age}.log"
        old.write_text("x")
        os.utime(old, (1_000_000 - age, 1_000_000 - age))
    function = DeployedFunction("fn", "arn:fn", "h.handle", 3, 128, {}, None, tmp_path)
    mapping = MappingSettings("u", ARN, 10, None, True, True, "Enabled")
    queue = QueueSettings("http://q/jobs.fifo", ARN, 18, 5, None)
    # WHEN a runner for a new function starts
    with EventSourceRunner(Deployment(function, mapping, queue), target=TARGET):
        pass
    # THEN the directory holds its log and the newest others: never more than it keeps
    names = sorted(p.name for p in directory.iterdir())
    assert len(names) == LOG_FILES_KEPT
    assert "fn.log" in names
    assert f"old-{LOG_FILES_KEPT - 1}.log" not in names


def test_a_log_past_its_limit_is_emptied_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a log limited to 100 bytes, written through its file as the workers write
    monkeypatch.setattr(function_log, "LOG_LIMIT_BYTES", 100)
    log = FunctionLog("fn", tmp_path / "fn.log")
    log.file.write(b"x" * 60 + b"\n")
    log.file.flush()
    # WHEN bounded under the limit THEN nothing changes
    log.bound()
    assert log.path.stat().st_size == 61
    # WHEN more is written past the limit and it is bounded THEN it is emptied, with a line saying so
    log.file.write(b"y" * 60 + b"\n")
    log.file.flush()
    log.bound()
    log.file.write(b"after\n")
    log.close()
    assert log.path.read_text() == (
        "[constructs-fifo: log emptied at 100 bytes; it keeps the latest lines only]\nafter\n"
    )
