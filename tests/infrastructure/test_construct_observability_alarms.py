"""The alarms' descriptions (construct/observability/alarms.py): what each means and the exact first
command to run."""

from __future__ import annotations

import os
from typing import Any

import pytest
from aws_cdk import CfnElement, Stack

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.cli import build_parser
from constructs_fifo.stacks.deployed import DeployedQueue, select_queue

from .stacks import Synthesized

#: The first command each alarm's description names, after ``constructs-fifo`` and before the target.
FIRST_COMMANDS = {
    "QueueAgeAlarm": "status",
    "DeadLetterQueueAlarm": "dlq list",
    "FunctionThrottlesAlarm": "status",
    "ParkedGroupsAlarm": "groups list --parked",
    "SequenceGapAlarm": "groups list --gaps",
}


def _description(stack: Stack, alarm: Any) -> Any:
    return stack.resolve(alarm.node.default_child.alarm_description)


def _first_line(description: str) -> str:
    [line] = [line for line in description.splitlines() if line.startswith("First run: ")]
    return line.removeprefix("First run: ")


@pytest.mark.parametrize("queue", ["sample_workspaces", "sample_jobs"])
def test_every_alarm_says_what_it_means_and_the_exact_first_command(
    synthesized: Synthesized, queue: str
) -> None:
    # GIVEN a queue of the sample stack AgentJobs (state mode: Workspaces; claim mode: Notifications)
    jobs: OrderedAgentQueue = getattr(synthesized, queue)
    target = f"--stack AgentJobs --queue {jobs.node.path}"
    for alarm in jobs.alarms:
        description = _description(synthesized.sample, alarm)
        if alarm.node.id == "FunctionErrorsAlarm":
            # THEN the errors alarm first tails the function's own log group (a token: Fn::Join)
            parts = description["Fn::Join"][1]
            assert parts[0].endswith("\nFirst run: aws logs tail ")
            log_group = jobs.log_group.node.default_child
            assert isinstance(log_group, CfnElement)
            assert parts[1] == {"Ref": synthesized.sample.resolve(log_group.logical_id)}
            assert parts[2] == f" --since 30m\nThen: constructs-fifo status {target}"
            continue
        # THEN every other alarm's description starts with what it means, then the command, exactly
        meaning = description.split("\nFirst run: ")[0]
        assert len(meaning) > 60, alarm.node.id
        assert _first_line(description) == f"constructs-fifo {FIRST_COMMANDS[alarm.node.id]} {target}"
        # AND fits CloudFormation's 1024 characters
        assert len(description) <= 1024


def test_the_parked_alarm_names_the_command_of_the_issue(synthesized: Synthesized) -> None:
    # GIVEN the sample's claim-mode queue under PARK
    [parked] = [a for a in synthesized.sample_jobs.alarms if a.node.id == "ParkedGroupsAlarm"]
    # THEN its description is pinned in full
    assert _description(synthesized.sample, parked) == (
        "A message group was parked at a dead job: its later jobs are kept, in order, until an operator "
        "resumes it.\n"
        "First run: constructs-fifo groups list --parked --stack AgentJobs --queue AgentJobs/Notifications\n"
        "Then: constructs-fifo groups show GROUP --stack AgentJobs --queue AgentJobs/Notifications"
    )


def test_the_queue_the_descriptions_name_is_the_one_the_cli_resolves(synthesized: Synthesized) -> None:
    # GIVEN both queues of the sample stack as the CLI finds them deployed: each one's construct path
    # is the deepest construct holding its queue and function (their aws:cdk:path metadata)
    def deployed(jobs: OrderedAgentQueue) -> DeployedQueue:
        paths = [jobs.queue.node.default_child.node.path, jobs.function.node.default_child.node.path]  # type: ignore[union-attr]
        return DeployedQueue(
            stack="AgentJobs",
            construct_path=os.path.commonpath(paths),
            queue_name=jobs.queue_name,
            queue_url=f"https://sqs/{jobs.queue_name}",
            queue_arn=f"arn:aws:sqs:r:1:{jobs.queue_name}",
            function_name=jobs.node.id,
        )

    queues = [deployed(synthesized.sample_workspaces), deployed(synthesized.sample_jobs)]
    for jobs, expected in zip((synthesized.sample_workspaces, synthesized.sample_jobs), queues, strict=True):
        # WHEN the CLI resolves the --queue an alarm names
        [alarm] = [a for a in jobs.alarms if a.node.id == "QueueAgeAlarm"]
        command = _first_line(_description(synthesized.sample, alarm)).split()
        stack, wanted = command[command.index("--stack") + 1], command[command.index("--queue") + 1]
        # THEN it is this construct's queue, in this stack
        assert stack == Stack.of(jobs).stack_name
        assert select_queue(stack, queues, wanted) == expected


@pytest.mark.parametrize("queue", ["sample_workspaces", "sample_jobs"])
def test_every_command_an_alarm_names_is_one_the_cli_takes(synthesized: Synthesized, queue: str) -> None:
    # GIVEN every constructs-fifo line of the queue's alarm descriptions (GROUP and JOB filled in)
    jobs: OrderedAgentQueue = getattr(synthesized, queue)
    commands = [
        line.split(": ", 1)[1]
        for alarm in jobs.alarms
        for part in _texts(_description(synthesized.sample, alarm))
        for line in part.splitlines()
        if line.startswith(("First run: constructs-fifo ", "Then: constructs-fifo "))
    ]
    assert len(commands) >= len(jobs.alarms)
    for command in commands:
        argv = command.replace("GROUP", "ws#1").replace("JOB", "j1").split()[1:]
        # WHEN the CLI parses it THEN it is a command with these options (a renamed flag fails here)
        args = build_parser().parse_args(argv)
        assert (args.stack, args.queue) == ("AgentJobs", jobs.node.path)


def _texts(description: Any) -> list[str]:
    """The literal parts of a description (a Fn::Join's strings, or the string itself)."""
    if isinstance(description, str):
        return [description]
    return [part for part in description["Fn::Join"][1] if isinstance(part, str)]
