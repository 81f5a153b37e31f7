"""The container consumer's pure parts (constructs_fifo/construct/resources/containers.py): the image the
docs tell users to build, and the scaling steps from messages to tasks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from constructs_fifo.construct.resources.containers import WORKER_COMMAND, scaling_steps

REPO = Path(__file__).resolve().parents[2]


def _documented_dockerfile() -> list[str]:
    """The lines of the fenced ``dockerfile`` block of docs/construct.md's "The image"."""
    text = (REPO / "docs" / "construct.md").read_text(encoding="utf-8")
    section = text[text.index("### The image") :]
    [block] = re.findall(r"```dockerfile\n(.*?)```", section[: section.index("\n### ", 1)], re.DOTALL)
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_the_documented_image_runs_the_worker_with_no_arguments() -> None:
    # GIVEN the Dockerfile of docs/construct.md / THEN its last line is the worker command, exec form
    lines = _documented_dockerfile()
    assert lines[-1].startswith("CMD ")
    assert json.loads(lines[-1].removeprefix("CMD ")) == list(WORKER_COMMAND) == ["constructs-fifo", "worker"]
    assert not [line for line in lines if line.startswith("ENTRYPOINT")]


def test_the_documented_image_is_python_3_11_or_newer_with_constructs_fifo_and_the_jobs_dependencies() -> (
    None
):
    # GIVEN the Dockerfile's lines
    lines = _documented_dockerfile()
    # THEN it starts from a slim Python of 3.11 or newer
    base = re.fullmatch(r"FROM python:3\.(\d+)-slim", lines[0])
    assert base is not None and int(base.group(1)) >= 11, lines[0]
    # AND installs the job's requirements and constructs-fifo, then copies the job code
    installs = [line for line in lines if line.startswith("RUN pip install")]
    assert installs == [
        "RUN pip install --no-cache-dir -r requirements.txt",
        "RUN pip install --no-cache-dir constructs-fifo",
    ]
    assert "COPY . ." in lines and lines.index("COPY . .") > lines.index(installs[-1])


@pytest.mark.parametrize(
    ("slots", "max_tasks", "expected_groups", "tasks"),
    [
        (4, 3, None, [1, 2, 3]),
        (1, 1, None, [1]),
        # the groups the hint expects cap the tasks: 6 groups / 4 slots = 2 tasks
        (4, 8, 6, [1, 2]),
        # more tasks than steps: at most 10 steps, spread up to max_tasks
        (2, 30, None, [1, *range(3, 31, 3)]),
    ],
)
def test_the_scaling_steps_ask_one_task_per_slots_messages_up_to_what_the_work_can_use(
    slots: int, max_tasks: int, expected_groups: int | None, tasks: list[int]
) -> None:
    # GIVEN slots, max_tasks and the hint WHEN the steps are built
    built = scaling_steps(slots=slots, max_tasks=max_tasks, expected_groups=expected_groups)
    # THEN no message asks no task, and t tasks start at (t - 1) x slots + 1 messages (half a message
    # below, so that a whole number of messages never lands on a bound)
    assert (built[0].upper, built[0].change) == (0.5, 0)
    assert [(step.lower, step.change) for step in built[1:]] == [((t - 1) * slots + 0.5, t) for t in tasks]


def _tasks_for(messages: int, steps: list[tuple[float | None, float]]) -> float:
    """The task count a step list asks for ``messages`` (the interval holding it)."""
    return max(change for lower, change in steps if lower is None or messages > lower)


def test_one_message_starts_one_task_and_none_stops_them_all() -> None:
    # GIVEN the default steps (4 slots, 4 tasks)
    steps = [(step.lower, step.change) for step in scaling_steps(slots=4, max_tasks=4, expected_groups=None)]
    # THEN 0 messages ask 0 tasks, 1 asks 1, 4 still 1, 5 asks 2, 100 asks max_tasks
    assert [_tasks_for(m, steps) for m in (0, 1, 4, 5, 8, 9, 100)] == [0, 1, 1, 2, 2, 3, 4]
