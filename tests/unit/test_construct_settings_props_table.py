"""The props tables of README.md and docs/construct.md are the settings spec's rows, written out."""

from __future__ import annotations

import enum
import inspect
import shutil
from pathlib import Path

import pytest
from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.construct.errors import PropsTableMissingError
from constructs_fifo.construct.settings import tokens
from constructs_fifo.construct.settings.props_table import (
    DOCS,
    SOURCES,
    main,
    render,
    rewrite,
    rewrite_parameters,
)
from constructs_fifo.runtime.settings.spec import SETTINGS

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("name", "with_env"), DOCS.items())
def test_each_docs_props_table_is_the_one_the_spec_writes(name: str, with_env: bool) -> None:
    # GIVEN the committed doc / WHEN its table is written again from the rows
    text = (REPO / name).read_text(encoding="utf-8")
    # THEN nothing changes (else: python -m constructs_fifo.construct.settings.props_table)
    assert rewrite(text, with_env=with_env) == text


def _keywords() -> dict[str, inspect.Parameter]:
    parameters = inspect.signature(OrderedAgentQueue.__init__).parameters
    return {name: p for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}


def test_every_keyword_of_the_construct_is_a_row_in_its_order() -> None:
    # GIVEN the construct's keyword-only props / THEN each is a row's prop, in the same order
    assert [row.prop for row in SETTINGS.values() if row.prop is not None] == list(_keywords())


def _as_row_value(value: object) -> object:
    """A signature default in a row's terms: seconds, an enum member's name (the environment's value),
    the attribute name of a CDK constant (``lambda_.Architecture.X86_64``: ``X86_64``)."""
    if isinstance(value, Duration):
        return tokens.seconds(value)
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, lambda_.Architecture):
        return next(
            name for name in ("X86_64", "ARM_64") if getattr(lambda_.Architecture, name).name == value.name
        )
    return value


def test_the_constructs_defaults_are_the_rows_defaults() -> None:
    # GIVEN each keyword with a default of its own (not None: computed, or set only in state mode)
    for name, parameter in _keywords().items():
        if parameter.default in (inspect.Parameter.empty, None):
            continue
        # THEN it is its row's default
        assert _as_row_value(parameter.default) == SETTINGS[name].default, name


def test_the_table_has_one_line_per_prop_row_in_keyword_order() -> None:
    # GIVEN the table with the variable column
    lines = render(with_env=True).splitlines()[2:]
    # THEN one line per row with a prop, in the rows' order, with its variable or "construct only"
    props = [row for row in SETTINGS.values() if row.prop is not None]
    assert [line.split(" | ")[0] for line in lines] == [f"| `{row.prop}`" for row in props]
    for line, row in zip(lines, props, strict=True):
        assert line.endswith(f"| `{row.env}` |" if row.env else "| construct only |")


def test_check_fails_on_a_drifted_doc_and_a_rewrite_repairs_it(tmp_path: Path) -> None:
    # GIVEN copies of the docs (and of the construct, whose docstring is written too), one with a default
    # changed by hand
    for name in (*DOCS, *SOURCES):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    readme = tmp_path / "README.md"
    drifted = readme.read_text(encoding="utf-8").replace(
        "| `batch_size` | `int` | `10` |", "| `batch_size` | `int` | `5` |"
    )
    readme.write_text(drifted, encoding="utf-8")
    # WHEN checking / THEN it fails and changes nothing
    assert main(["--root", str(tmp_path), "--check"]) == 1
    assert readme.read_text(encoding="utf-8") == drifted
    # AND rewriting restores the spec's table, after which the check passes
    assert main(["--root", str(tmp_path)]) == 0
    assert readme.read_text(encoding="utf-8") == (REPO / "README.md").read_text(encoding="utf-8")
    assert main(["--root", str(tmp_path), "--check"]) == 0


def test_a_doc_without_markers_is_refused_with_the_fix() -> None:
    # GIVEN a doc whose table has no markers / WHEN rewriting / THEN the error names both lines
    with pytest.raises(PropsTableMissingError, match="add both where the table belongs"):
        rewrite("# Props\n\n| prop |\n", with_env=False)


def test_the_constructs_docstring_is_the_one_the_spec_writes() -> None:
    # GIVEN the construct's source / WHEN its docstring's Parameters are written again from the rows
    for name in SOURCES:
        text = (REPO / name).read_text(encoding="utf-8")
        # THEN nothing changes (else: python -m constructs_fifo.construct.settings.props_table)
        assert rewrite_parameters(text) == text


def test_help_shows_each_props_type_limits_and_default() -> None:
    # GIVEN what help(OrderedAgentQueue) and an IDE show / THEN each prop row is an entry, in keyword
    # order, with its row's type, limits and default
    doc = inspect.getdoc(OrderedAgentQueue) or ""
    parameters = doc.split("Parameters\n----------\n")[1].split("\nRaises\n")[0]
    names = [line.split(" : ")[0] for line in parameters.splitlines() if " : " in line and line[0] != " "]
    assert names == list(_keywords())
    flat = " ".join(parameters.split())
    for row in SETTINGS.values():
        if row.prop is None:
            continue
        entry = flat.split(f"{row.prop} : {row.type} ")[1]
        assert f"Default: {row.default_doc.replace('`', '``')}." in " ".join(entry.split()[:80]), row.prop
        assert row.limits_doc().replace("`", "``") in entry, row.prop


def test_check_fails_on_a_drifted_docstring(tmp_path: Path) -> None:
    # GIVEN a copy of the repository's docs and construct, the docstring's batch_size default changed
    for name in (*DOCS, *SOURCES):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, tmp_path / name)
    source = tmp_path / SOURCES[0]
    drifted = source.read_text(encoding="utf-8").replace("Limits: 1–10. Default: ``10``.", "Default: 5.")
    assert drifted != source.read_text(encoding="utf-8")
    source.write_text(drifted, encoding="utf-8")
    # WHEN checking / THEN it fails; a rewrite restores the construct's source
    assert main(["--root", str(tmp_path), "--check"]) == 1
    assert main(["--root", str(tmp_path)]) == 0
    assert source.read_text(encoding="utf-8") == (REPO / SOURCES[0]).read_text(encoding="utf-8")
