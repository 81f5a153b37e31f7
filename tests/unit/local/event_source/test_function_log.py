"""The function log of a drain: a new numbered file per drain, in the user's and the project's own
directory, each function's newest kept, emptied only past its limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from constructs_fifo.local.event_source import function_log
from constructs_fifo.local.event_source.deployment import (
    DeployedFunction,
    Deployment,
    MappingSettings,
    QueueSettings,
)
from constructs_fifo.local.event_source.function_log import (
    LOG_DIR_ENV,
    LOG_FILES_KEPT,
    FunctionLog,
    log_directory,
    project_name,
)
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.stacks.aws import AwsTarget

ARN = "arn:aws:sqs:eu-west-1:123456789012:jobs.fifo"
TARGET = AwsTarget("http://localhost:1", "eu-west-1", fake_credentials=True)


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_STATE_HOME in the test's directory, run from an app directory ``jobs`` there."""
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    app = tmp_path / "jobs"
    app.mkdir()
    monkeypatch.chdir(app)
    return tmp_path / "state"


def _runner(code_dir: Path, function: str = "fn") -> EventSourceRunner:
    settings = DeployedFunction(function, f"arn:{function}", "h.handle", 3, 128, {}, None, code_dir)
    mapping = MappingSettings("u", ARN, 10, None, True, True, "Enabled")
    queue = QueueSettings("http://q/jobs.fifo", ARN, 18, 5, None)
    return EventSourceRunner(Deployment(settings, mapping, queue), target=TARGET)


def test_each_drain_has_a_new_numbered_log_in_the_project_s_own_directory(
    state_home: Path, tmp_path: Path
) -> None:
    # GIVEN an app directory `jobs` and a state home
    # WHEN three runners of one function start and close, writing a line each
    paths = []
    for drain in range(3):
        with _runner(tmp_path) as runner:
            runner.log_path.write_text(f"drain {drain}\n")
            paths.append(runner.log_path)
    # THEN each drain has its own log, numbered, under <state>/constructs-fifo/<project>/logs
    directory = state_home / "constructs-fifo" / project_name(tmp_path / "jobs") / "logs"
    assert paths == [directory / f"fn.{n}.log" for n in (1, 2, 3)]
    # AND no drain emptied an earlier one's
    assert [path.read_text() for path in paths] == ["drain 0\n", "drain 1\n", "drain 2\n"]


def test_two_apps_of_the_same_name_keep_their_logs_apart(tmp_path: Path) -> None:
    # GIVEN two app directories both named jobs
    one, two = tmp_path / "a" / "jobs", tmp_path / "b" / "jobs"
    # THEN their projects differ, and each is named after its directory
    assert project_name(one) != project_name(two)
    assert project_name(one).startswith("jobs-") and project_name(two).startswith("jobs-")


def test_the_log_directory_can_be_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN CONSTRUCTS_FIFO_LOG_DIR
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path / "mine"))
    # THEN it is the directory, as it is
    assert log_directory() == tmp_path / "mine"


def test_without_xdg_state_home_logs_go_under_local_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN no XDG_STATE_HOME and a home directory
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    # THEN the logs are under ~/.local/state/constructs-fifo/<project>/logs
    assert log_directory(tmp_path / "jobs") == (
        tmp_path / ".local" / "state" / "constructs-fifo" / project_name(tmp_path / "jobs") / "logs"
    )


def test_each_function_keeps_its_newest_logs_and_nothing_else_is_pruned(
    state_home: Path, tmp_path: Path
) -> None:
    # GIVEN as many logs of fn as a function keeps, a log of another function, and a file of the user's
    directory = log_directory()
    directory.mkdir(parents=True)
    for number in range(1, LOG_FILES_KEPT + 1):
        (directory / f"fn.{number}.log").write_text(str(number))
    (directory / "other.1.log").write_text("other")
    (directory / "notes.log").write_text("mine")
    # WHEN a drain of fn starts
    with _runner(tmp_path) as runner:
        path = runner.log_path
    # THEN fn keeps its newest logs, this drain's included, and the oldest went
    names = sorted(p.name for p in directory.iterdir())
    assert path.name == f"fn.{LOG_FILES_KEPT + 1}.log"
    assert [n for n in names if n.startswith("fn.")] == sorted(
        f"fn.{number}.log" for number in range(2, LOG_FILES_KEPT + 2)
    )
    # AND the other function's log and the user's file are untouched
    assert {"other.1.log", "notes.log"} <= set(names)


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
