"""cli/operations/fix.py: a refusal's suggested command carries this invocation's target, ready to paste."""

from __future__ import annotations

import argparse

from constructs_fifo.cli.operations.fix import complete_commands
from constructs_fifo.ops.plan import command


def test_a_suggested_command_gets_the_endpoint_region_stack_and_queue_it_lacks() -> None:
    # GIVEN an invocation against an emulator in another region, and a fix naming a real job and group
    args = argparse.Namespace(
        endpoint_url="http://localhost:4641", region="eu-west-1", stack="Jobs", queue="Jobs/Queue"
    )
    resume = command("groups", "resume", "ws#1", "--stack", "S")
    fix = f"drop it: {command('dlq', 'drop', 'job 7')}, or {resume}"
    # WHEN it is completed
    completed = complete_commands(fix, args)
    # THEN every command has the same target (a value with a space quoted; an option it names kept)
    target = "--endpoint-url http://localhost:4641 --region eu-west-1"
    assert completed == (
        f"drop it: `constructs-fifo dlq drop 'job 7' {target} --stack Jobs --queue Jobs/Queue`, or "
        f"`constructs-fifo groups resume ws#1 --stack S {target} --queue Jobs/Queue`"
    )


def test_without_an_endpoint_or_queue_only_what_was_given_is_added() -> None:
    args = argparse.Namespace(endpoint_url=None, region="us-east-1", stack="AgentJobs", queue=None)
    assert complete_commands("`constructs-fifo dlq list`", args) == (
        "`constructs-fifo dlq list --region us-east-1 --stack AgentJobs`"
    )
