"""The handler prop against the code directory: an error when it cannot be there, a warning when synth
cannot know (constructs_fifo/construct/checks/handler.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, CfnParameter, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Annotations, Match
from constructs import Construct

from constructs_fifo import CodeBundling, OrderedAgentQueue
from constructs_fifo.construct import InvalidPropsError
from constructs_fifo.construct.checks.handler import WARNING_HANDLER_NOT_CHECKED, check_handler_found

WORKER = "def handle(job, context):\n    return None\n\n\ndef apply(job, state):\n    return state\n"


@pytest.fixture
def code_dir(tmp_path: Path) -> Path:
    """A code directory holding worker.py (handle, apply)."""
    (tmp_path / "worker.py").write_text(WORKER)
    return tmp_path


def _problems(code_dir: Path, handler: str, **props: Any) -> list[str]:
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(
            Stack(App(), "S"), "Jobs", code=lambda_.Code.from_asset(str(code_dir)), handler=handler, **props
        )
    return raised.value.problems


def _check(code_dir: Path, handler: str, **options: Any) -> tuple[list[str], list[str]]:
    """The problems of ``handler`` and the warnings it added, without building a queue."""
    stack = Stack(App(), "S")
    scope = Construct(stack, "Jobs")
    problems = check_handler_found(scope, handler=handler, code_path=str(code_dir), **options)
    found = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    return problems, [str(w.entry.data) for w in found]


def test_a_missing_module_fails_synth_naming_what_was_looked_for(code_dir: Path) -> None:
    # GIVEN a code directory holding worker.py WHEN the handler names a module it does not hold
    problems = _problems(code_dir, "nosuch.handle")
    # THEN synth fails with the prop, the value, the files looked for, the directory and the fix
    assert problems == [
        f"handler='nosuch.handle' names module 'nosuch', which is not in the code directory: looked for "
        f"nosuch.py or nosuch/__init__.py under {code_dir} (it holds worker.py), so the function's first "
        "invocation would fail with \"No module named 'nosuch'\"; pass handler='<module>.<function>' "
        f"naming a module of {code_dir}, or add nosuch.py there."
    ]


def test_a_missing_function_fails_synth_naming_the_module_s_functions(code_dir: Path) -> None:
    # GIVEN worker.py defining handle and apply WHEN the handler names a function it does not define
    problems = _problems(code_dir, "worker.nosuchfn")
    # THEN synth fails naming the function, the file, what counts as defined and the fix
    assert problems == [
        f"handler='worker.nosuchfn' names function 'nosuchfn', which worker.py (under {code_dir}) does not "
        "define at top level: looked for a def, class, assignment or import of 'nosuchfn' (it defines "
        "apply, handle), so the function's first invocation would fail with \"module 'worker' has no "
        "attribute 'nosuchfn'\"; pass handler='worker.<function>' naming one of its functions, or define "
        "def nosuchfn(job, context) in worker.py."
    ]


def test_the_handler_problem_is_collected_with_every_other(code_dir: Path) -> None:
    # GIVEN a missing module and an invalid batch size in one call
    problems = _problems(code_dir, "nosuch.handle", batch_size=11)
    # THEN both are raised together
    assert [p.split("=")[0] for p in problems] == ["batch_size", "handler"]


@pytest.mark.parametrize(
    ("source", "handler"),
    [
        ("from elsewhere import handle\n", "worker.handle"),
        ("import elsewhere as handle\n", "worker.handle"),
        ("handle = print\n", "worker.handle"),
        ("handle: object = print\n", "worker.handle"),
        (
            "try:\n    from fast import handle\nexcept ImportError:\n    def handle(job, context): ...\n",
            "worker.handle",
        ),
        ("if True:\n    class handle: ...\n", "worker.handle"),
        ("async def handle(job, context): ...\n", "worker.handle"),
    ],
    ids=["from-import", "import-as", "assignment", "annotated", "try-block", "if-block-class", "async-def"],
)
def test_a_name_bound_at_top_level_counts_as_defined(tmp_path: Path, source: str, handler: str) -> None:
    # GIVEN worker.py binding handle at top level in one of the ways Python allows
    (tmp_path / "worker.py").write_text(source)
    # WHEN it is checked
    problems, warnings = _check(tmp_path, handler)
    # THEN it is neither a problem nor a warning
    assert (problems, warnings) == ([], [])


def test_a_package_module_and_a_dotted_module_are_found(tmp_path: Path) -> None:
    # GIVEN billing/__init__.py defining handle, and billing/jobs/worker.py defining run (no __init__ there)
    (tmp_path / "billing" / "jobs").mkdir(parents=True)
    (tmp_path / "billing" / "__init__.py").write_text("def handle(job, context): ...\n")
    (tmp_path / "billing" / "jobs" / "worker.py").write_text("def run(job, context): ...\n")
    # THEN both handlers are found
    assert _check(tmp_path, "billing.handle") == ([], [])
    assert _check(tmp_path, "billing.jobs.worker.run") == ([], [])


def test_a_function_defined_only_inside_another_is_not_top_level(tmp_path: Path) -> None:
    # GIVEN worker.py whose handle is nested in a factory
    (tmp_path / "worker.py").write_text("def make():\n    def handle(job, context): ...\n    return handle\n")
    # WHEN it is checked THEN it is a problem
    problems, _ = _check(tmp_path, "worker.handle")
    assert len(problems) == 1 and "it defines make" in problems[0]


def test_dynamic_calls_inside_functions_do_not_hide_a_missing_function(tmp_path: Path) -> None:
    # GIVEN worker.py whose functions call setattr and globals() (at run time, not at import)
    (tmp_path / "worker.py").write_text(
        "def handle(job, context):\n    setattr(job, 'seen', True)\n    return globals()\n"
    )
    # WHEN the handler names a function it does not define THEN it is a problem, not a warning
    problems, warnings = _check(tmp_path, "worker.nosuchfn")
    assert (len(problems), warnings) == (1, [])


def test_a_handler_module_left_out_by_exclude_fails(code_dir: Path) -> None:
    # GIVEN bundling that excludes worker.py WHEN the handler names it
    problems, _ = _check(code_dir, "worker.handle", bundling=CodeBundling(exclude=["worker.py"]))
    # THEN the problem says the asset leaves it out
    assert problems == [
        "handler='worker.handle' names worker.py, which bundling.exclude leaves out of the asset, so the "
        "function's first invocation would fail with \"No module named 'worker'\"; take it back in (an "
        f"exclude pattern '!worker.py') or pass handler='<module>.<function>' naming a module of {code_dir}."
    ]


def _layer(stack: Stack) -> lambda_.ILayerVersion:
    return lambda_.LayerVersion.from_layer_version_arn(
        stack, "Layer", "arn:aws:lambda:eu-west-1:123456789012:layer:jobs:1"
    )


@pytest.mark.parametrize(
    ("handler", "source", "why"),
    [
        ("json.dumps", None, "'json' is a module of Python's standard library"),
        ("boto3.client", None, "'boto3' is provided by Lambda's Python runtime"),
        ("worker.handle", "from helpers import *\n", "but it imports * from helpers"),
        ("worker.handle", "def __getattr__(name): ...\n", "but it defines a module __getattr__"),
        ("worker.handle", "globals()['handle'] = print\n", "but it calls globals()"),
        ("worker.handle", "def handle(:\n", "worker.py cannot be read by this Python (SyntaxError"),
    ],
    ids=["stdlib", "runtime-provided", "star-import", "module-getattr", "globals", "syntax-error"],
)
def test_what_synth_cannot_know_is_a_warning_with_an_id(
    tmp_path: Path, handler: str, source: str | None, why: str
) -> None:
    # GIVEN a module importable only at run time, or one that can bind names synth cannot see
    if source is not None:
        (tmp_path / "worker.py").write_text(source)
    # WHEN it is checked
    problems, warnings = _check(tmp_path, handler)
    # THEN it is a warning naming the handler and why, with the construct's warning id; not a problem
    assert problems == []
    assert len(warnings) == 1
    assert warnings[0].startswith(f"handler={handler!r} is not checked at synth: ")
    assert why in warnings[0]
    assert warnings[0].endswith(f"[ack: {WARNING_HANDLER_NOT_CHECKED}]")


def test_a_module_absent_from_the_directory_with_layers_is_a_warning(code_dir: Path) -> None:
    # GIVEN a function with a layer WHEN the handler's module is not in the code directory
    stack = Stack(App(), "S")
    scope = Construct(stack, "Jobs")
    problems = check_handler_found(
        scope, handler="shared.handle", code_path=str(code_dir), layers=[_layer(stack)]
    )
    # THEN it may be the layer's: a warning, not a problem
    warnings = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("it may be in one of its 1 layers")
    )
    assert (problems, len(warnings)) == ([], 1)


def test_a_token_handler_is_a_warning(code_dir: Path) -> None:
    # GIVEN a handler only known at deploy time
    stack = Stack(App(), "S")
    handler = CfnParameter(stack, "Handler").value_as_string
    problems = check_handler_found(Construct(stack, "Jobs"), handler=handler, code_path=str(code_dir))
    # THEN it is not checked, and says so
    warnings = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("handler is not checked at synth: it is a token")
    )
    assert (problems, len(warnings)) == ([], 1)
