"""Unit tests of the constructs-fifo command line: parsing, defaults, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from constructs_fifo.cli import EXIT_ENVIRONMENT, EXIT_USAGE, build_parser, main
from constructs_fifo.cli import app as cli_app
from constructs_fifo.local.errors import EmulatorError
from constructs_fifo.local.event_source.reports import DrainStats
from constructs_fifo.stacks import extras
from constructs_fifo.stacks.deployed import DeployedQueue
from constructs_fifo.stacks.errors import CdkNotFoundError


def test_demo_defaults_match_the_documented_workload(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no endpoint in the environment
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    # WHEN `demo` is parsed with no options
    args = build_parser().parse_args(["demo"])
    # THEN the defaults are the issues': 20 workspaces, 500 jobs, 10 % duplicates and failures, 2 poison
    # jobs (each sent twice) and 1 failing until its last attempt
    assert (
        args.workspaces,
        args.jobs,
        args.duplicate_rate,
        args.failure_rate,
        args.poison,
        args.last_attempt,
    ) == (20, 500, 0.1, 0.1, 2, 1)
    assert args.endpoint_url is None
    assert args.scenario == "verify"
    assert args.stack == "AgentJobs"
    # AND every scenario is a choice, the events one included
    for scenario in ("verify", "divergence", "events"):
        assert build_parser().parse_args(["demo", "--scenario", scenario]).scenario == scenario


def test_deploy_and_drain_take_a_queue_the_demo_uses_both_of_the_sample_app(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a stack with several queues WHEN deploy or drain names one THEN it is parsed
    for command in ("deploy", "drain"):
        parsed = build_parser().parse_args([command, "--queue", "AgentJobs/Workspaces"])
        assert parsed.queue == "AgentJobs/Workspaces"
    # AND drain --all takes every queue, but not together with --queue
    assert build_parser().parse_args(["drain", "--all"]).all_queues is True
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(["drain", "--all", "--queue", "Workspaces"])
    assert caught.value.code == EXIT_USAGE
    assert "not allowed with argument" in capsys.readouterr().err
    # AND the demo takes no --queue: it finds the sample app's two queues itself
    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "--queue", "Workspaces"])


def test_endpoint_defaults_to_aws_endpoint_url(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN AWS_ENDPOINT_URL is set
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://localhost:4599")
    # WHEN each AWS-talking command is parsed THEN it honours the variable
    for command in (["deploy"], ["drain"], ["demo"]):
        assert build_parser().parse_args(command).endpoint_url == "http://localhost:4599"
    # AND an explicit flag wins
    args = build_parser().parse_args(["drain", "--endpoint-url", "http://localhost:1"])
    assert args.endpoint_url == "http://localhost:1"


def test_full_demo_command_line_is_parsed() -> None:
    # GIVEN every demo option WHEN parsed THEN each lands typed
    args = build_parser().parse_args(
        [
            "demo",
            "--endpoint-url",
            "http://localhost:4566",
            "--region",
            "eu-west-1",
            "--workspaces",
            "4",
            "--jobs",
            "40",
            "--duplicate-rate",
            "0.25",
            "--failure-rate",
            "0",
            "--poison",
            "1",
            "--last-attempt",
            "0",
            "--seed",
            "42",
            "--report",
            "out/r.json",
        ]
    )
    assert args.endpoint_url == "http://localhost:4566"
    assert args.region == "eu-west-1"
    assert (args.workspaces, args.jobs, args.poison, args.last_attempt, args.seed) == (4, 40, 1, 0, 42)
    assert (args.duplicate_rate, args.failure_rate) == (0.25, 0.0)
    assert args.report == Path("out/r.json")


def test_drain_takes_until_empty_or_for_but_not_both(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the drain command
    parser = build_parser()
    # WHEN --for is given THEN it is seconds
    assert parser.parse_args(["drain", "--for", "2.5"]).for_seconds == 2.5
    assert parser.parse_args(["drain", "--until-empty"]).for_seconds is None
    # AND both together are a usage error
    with pytest.raises(SystemExit) as caught:
        parser.parse_args(["drain", "--until-empty", "--for", "3"])
    assert caught.value.code == EXIT_USAGE
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["demo", "--duplicate-rate", "1.5"], "1.5 is outside 0..1"),
        (["demo", "--failure-rate", "x"], "'x' is not a number"),
        (["demo", "--jobs", "0"], "0 is below the minimum 1"),
        (["demo", "--poison", "-1"], "-1 is below the minimum 0"),
        (["demo", "--scenario", "chaos"], "invalid choice: 'chaos'"),
        (["drain", "--for", "0"], "must be more than 0 seconds"),
        (["local", "serve", "--port", "abc"], "'abc' is not a whole number"),
        (["local", "serve", "--port", "99999"], "99999 is above 65535, the highest TCP port"),
    ],
)
def test_bad_arguments_exit_2_naming_the_value(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a bad value WHEN parsed THEN exit code 2 and the message names the value
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == EXIT_USAGE
    assert fragment in capsys.readouterr().err


def test_an_invalid_workload_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN fewer jobs than workspaces WHEN the demo runs THEN it stops before any AWS call
    code = main(["demo", "--workspaces", "5", "--jobs", "3"])
    # THEN exit 2 and one line naming value, rule and fix
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_USAGE
    assert len(err) == 1
    assert "jobs=3: must be at least the number of workspaces (5)" in err[0]


def test_missing_cdk_cli_is_one_line_with_a_fix_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN deploy fails because there is no CDK CLI
    def no_cdk(*args: object, **kwargs: object) -> dict[str, str]:
        raise CdkNotFoundError("the AWS CDK CLI was not found; deploying needs it", "run `npm ci`")

    monkeypatch.setattr(cli_app, "deploy", no_cdk)
    # WHEN `deploy` runs
    code = main(["deploy", "--endpoint-url", "http://localhost:1"])
    # THEN exit 3, no traceback, the fix on the line
    err = capsys.readouterr().err
    assert code == EXIT_ENVIRONMENT
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("constructs-fifo: the AWS CDK CLI was not found")
    assert "Fix: run `npm ci`" in last


def test_emulator_failure_prints_cause_and_fix(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the demo cannot start its emulator
    def broken(*args: object, **kwargs: object) -> object:
        raise EmulatorError("the local emulator exited with code 1 before it was ready", "run `local serve`")

    monkeypatch.setattr(cli_app, "run_demo", broken)
    # WHEN the demo runs
    code = main(["demo", "--workspaces", "1", "--jobs", "1", "--poison", "0", "--last-attempt", "0"])
    # THEN exit 3 and exactly one line: cause then fix
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_ENVIRONMENT
    assert err == [
        "constructs-fifo: the local emulator exited with code 1 before it was ready. Fix: run `local serve`."
    ]


def test_deploy_prints_the_outputs_as_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # GIVEN a deploy that returns outputs, recording what it was given
    seen: dict[str, object] = {}

    def fake_deploy(app_dir: Path, **kwargs: object) -> dict[str, str]:
        seen.update(kwargs, app_dir=app_dir)
        return {"QueueUrl": "http://localhost:1/123456789012/q.fifo", "FunctionName": "f"}

    monkeypatch.setattr(cli_app, "deploy", fake_deploy)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    # WHEN deploy runs against a local endpoint
    code = main(
        ["deploy", "--endpoint-url", "http://localhost:1", "--app-dir", str(tmp_path), "--stack", "S"]
    )
    # THEN the outputs are printed as JSON and the call carried endpoint, stack and app dir
    out = capsys.readouterr().out
    assert code == 0
    assert json.loads(out)["FunctionName"] == "f"  # stdout is only the JSON: it can be piped
    assert seen["target"].endpoint_url == "http://localhost:1"  # type: ignore[attr-defined]
    assert seen["stack"] == "S"
    assert seen["app_dir"] == tmp_path


def test_deploy_with_queue_prints_that_queues_resources(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # GIVEN a deploy that succeeds and a stack whose queue Second is found by --queue
    queue = DeployedQueue(
        stack="S",
        construct_path="S/Second",
        queue_name="S-second.fifo",
        queue_url="http://localhost:1/123456789012/S-second.fifo",
        queue_arn="arn:aws:sqs:us-east-1:123456789012:S-second.fifo",
        function_name="second-fn",
        function_environment={"CONSTRUCTS_FIFO_CLAIM_TABLE": "claims-2"},
        dead_letter_queue_url="http://localhost:1/123456789012/S-second-dlq.fifo",
        dead_letter_queue_arn="arn:aws:sqs:us-east-1:123456789012:S-second-dlq.fifo",
    )
    asked: list[str | None] = []

    def fake_resolve(stack: str, **kwargs: object) -> DeployedQueue:
        asked.append(kwargs["queue"])  # type: ignore[arg-type]
        return queue

    monkeypatch.setattr(cli_app, "deploy", lambda *args, **kwargs: {"QueueUrl": "first"})
    monkeypatch.setattr(cli_app, "resolve_queue", fake_resolve)
    # WHEN deploy runs with --queue
    code = main(
        ["deploy", "--endpoint-url", "http://localhost:1", "--stack", "S", "--queue", "Second", "--json"]
    )
    # THEN stdout is that queue's resources, not the stack's outputs: URLs, ARNs and tables
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert asked == ["Second"]
    assert printed["constructPath"] == "S/Second"
    assert printed["claimTableName"] == "claims-2"
    assert printed["deadLetterQueueUrl"].endswith("S-second-dlq.fifo")
    assert printed["queueArn"] == "arn:aws:sqs:us-east-1:123456789012:S-second.fifo"
    assert printed["deadLetterQueueArn"] == "arn:aws:sqs:us-east-1:123456789012:S-second-dlq.fifo"


@pytest.mark.parametrize("argv", [["local", "serve"], ["demo", "--no-deploy"]])
def test_without_the_local_extra_the_emulator_commands_say_what_to_install(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an installation without the emulator's packages, and no endpoint (the demo starts one)
    monkeypatch.setattr(extras, "SERVER_PACKAGES", ("constructs_fifo_no_such_package",))
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    # WHEN an emulator command runs
    code = main(argv)
    # THEN one line names the missing package and the install command, exit 3
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_ENVIRONMENT
    assert len(err) == 1
    assert "constructs_fifo_no_such_package" in err[0]
    assert "pip install 'constructs-fifo[local]'" in err[0]


def test_drain_of_a_disabled_mapping_says_it_was_skipped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a stack whose queue's event source mapping is disabled (the runner skips it)
    class Runner:
        queue = SimpleNamespace(url="http://localhost:1/123456789012/q.fifo")
        log_path = Path("/tmp/constructs-fifo/fn.log")

        @classmethod
        def from_stack(cls, stack: str, **kwargs: object) -> Runner:
            return cls()

        def __enter__(self) -> Runner:
            return self

        def __exit__(self, *exc_info: object) -> None:
            pass

        def drain(self, **kwargs: object) -> DrainStats:
            return DrainStats(skipped="the event source mapping u of function fn is Disabled, ...")

    monkeypatch.setattr(cli_app, "EventSourceRunner", Runner)
    # WHEN drain runs
    code = main(["drain", "--endpoint-url", "http://localhost:1", "--stack", "S"])
    # THEN a queue left undrained is not success: exit 3, stderr says why, the stats carry the reason
    captured = capsys.readouterr()
    assert code == EXIT_ENVIRONMENT
    assert captured.err.strip().splitlines()[-1] == (
        "constructs-fifo: not drained: the event source mapping u of function fn is Disabled, ..."
    )
    # AND it said where the function's log is
    assert "the function's log: /tmp/constructs-fifo/fn.log" in captured.err
    assert json.loads(captured.out)["batches"] == 0
    assert json.loads(captured.out)["skipped"].startswith("the event source mapping u")


def test_drain_all_drains_every_queue_of_the_stack_and_prints_each(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a stack of two queues, whose runners report different statistics
    def queue(name: str) -> DeployedQueue:
        return DeployedQueue(
            stack="S",
            construct_path=f"S/{name}",
            queue_name=f"S-{name}.fifo",
            queue_url=f"http://localhost:1/123456789012/S-{name}.fifo",
            queue_arn=f"arn:aws:sqs:us-east-1:123456789012:S-{name}.fifo",
            function_name=f"{name}-fn",
        )

    drained: list[str] = []

    class Runner:
        log_path = Path("/tmp/constructs-fifo/fn.log")

        def __init__(self, function: str) -> None:
            self.function = function
            self.queue = SimpleNamespace(url=f"http://localhost:1/123456789012/{function}.fifo")

        @classmethod
        def from_function(cls, function: str, **kwargs: object) -> Runner:
            return cls(function)

        def __enter__(self) -> Runner:
            return self

        def __exit__(self, *exc_info: object) -> None:
            pass

        def drain(self, **kwargs: object) -> DrainStats:
            drained.append(self.function)
            return DrainStats(batches=len(drained), aws_calls={"dynamodb.PutItem t": 2})

    monkeypatch.setattr(cli_app, "find_queues", lambda stack, **kwargs: [queue("A"), queue("B")])
    monkeypatch.setattr(cli_app, "EventSourceRunner", Runner)
    # WHEN drain --all runs
    code = main(["drain", "--endpoint-url", "http://localhost:1", "--stack", "S", "--all"])
    # THEN both were drained, one after the other, and the statistics are printed per construct path
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert drained == ["A-fn", "B-fn"]
    assert {label: stats["batches"] for label, stats in printed.items()} == {"S/A": 1, "S/B": 2}
    assert printed["S/A"]["awsCalls"] == {"dynamodb.PutItem t": 2}


@pytest.mark.parametrize(
    ("argv", "usage", "suggested"),
    [
        (["drain", "--stak", "McpTools"], "usage: constructs-fifo drain ", "--stack"),
        (["groups", "resume", "ws#1", "--skip-deda"], "usage: constructs-fifo groups resume ", "--skip-dead"),
        (["status", "--jsn"], "usage: constructs-fifo status ", "--json"),
    ],
)
def test_a_mistyped_flag_gets_the_subcommands_usage_and_the_closest_flag(
    argv: list[str], usage: str, suggested: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a subcommand's flag mistyped WHEN it is parsed
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(argv)
    # THEN it exits 2 as argparse does, with the subcommand's usage (not the top-level one)
    assert caught.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(usage), err
    assert "usage: constructs-fifo [-h]" not in err
    # AND it names the mistyped flag and the closest one
    assert f"unrecognized arguments: {argv[-1] if argv[-1].startswith('--') else argv[1]}" in err
    assert f"did you mean {suggested}?" in err


def test_an_unrecognized_word_with_no_close_flag_gets_the_subcommands_usage_without_a_guess(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a word no flag of the subcommand resembles WHEN it is parsed
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(["status", "--zzzzzz"])
    # THEN the subcommand's usage and the word, and no guess
    assert caught.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("usage: constructs-fifo status ")
    assert "unrecognized arguments: --zzzzzz" in err
    assert "did you mean" not in err


@pytest.mark.parametrize("words", [("status",), ("groups", "cancel"), ("jobs", "show")], ids=" ".join)
def test_the_queue_help_speaks_of_any_stack_with_several_queues(
    capsys: pytest.CaptureFixture[str], words: tuple[str, ...]
) -> None:
    # WHEN a command's --help is read
    with pytest.raises(SystemExit):
        main([*words, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    # THEN --queue says when a stack needs it, in terms of the user's own stack, not the sample app's
    queue = text[text.index("--queue PATH_OR_NAME") :]
    assert "needed when the stack holds more than one" in queue and "sample app" not in queue
