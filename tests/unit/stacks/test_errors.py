"""The local errors' base: what failed and the fix, on one line; details below it."""

from __future__ import annotations

from constructs_fifo.stacks.errors import CdkCommandError, CommandError, StackNotFoundError


def test_one_line_joins_message_and_fix_with_one_full_stop_each() -> None:
    error = StackNotFoundError("stack 'X' was not found.", "run `constructs-fifo deploy`")
    assert error.one_line() == "stack 'X' was not found. Fix: run `constructs-fifo deploy`."
    assert str(error) == error.one_line()
    assert isinstance(error, CommandError)


def test_a_failed_cdk_command_keeps_the_end_of_its_output_as_details() -> None:
    output = "\n".join(f"line {n}" for n in range(40))
    error = CdkCommandError(["cdk", "deploy", "S"], 3, output)
    assert error.one_line() == (
        "`cdk deploy S` exited with status 3; it must exit with 0. Fix: fix the cause shown in its output "
        "(below)."
    )
    assert error.details == tuple(f"line {n}" for n in range(15, 40))
    assert str(error).splitlines()[1:] == list(error.details)
