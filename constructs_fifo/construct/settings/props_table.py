"""The props tables of README.md and docs/construct.md, and the construct's docstring, written from the
settings spec.

Each table is one line per prop row of :data:`constructs_fifo.runtime.settings.SETTINGS`, between two
marker comments in the doc; the rest of the doc is left alone. The ``Parameters`` section of
:class:`~constructs_fifo.construct.OrderedAgentQueue`'s docstring is one entry per prop row too, written
into its source: ``help()`` and an IDE, which reads the source, both show each prop's doc line, limits
and default as the row states them.
``tests/unit/test_construct_settings_props_table.py`` fails when a table or the docstring differs from
what this writes, so a prop's default, limits or doc line is changed in its row and the docs follow::

    python -m constructs_fifo.construct.settings.props_table           # rewrite the tables (or: make docs)
    python -m constructs_fifo.construct.settings.props_table --check   # exit 1 naming each doc that drifted

It reads the rows only (no construct is built, nothing is synthesized).
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from constructs_fifo.construct.errors import PropsTableMissingError
from constructs_fifo.runtime.settings.spec import SETTINGS, Setting

__all__ = [
    "BEGIN",
    "DOCS",
    "END",
    "SOURCES",
    "main",
    "render",
    "render_parameters",
    "rewrite",
    "rewrite_parameters",
]

#: The line before a generated table.
BEGIN: Final = (
    "<!-- props table: generated from constructs_fifo/runtime/settings/spec.py by "
    "`python -m constructs_fifo.construct.settings.props_table`; edit the rows there -->"
)
#: The line after it.
END: Final = "<!-- end of props table -->"
#: The docs holding a table, relative to the repository root, and whether it has the environment
#: variable column (the reference has it; the README stays narrow).
DOCS: Final = {"README.md": False, "docs/construct.md": True}
#: The source whose class docstring's ``Parameters`` section is written from the rows.
SOURCES: Final = ("constructs_fifo/construct/ordered_agent_queue.py",)
#: The section's heading in the class docstring, and the heading that follows it.
_PARAMETERS: Final = "    Parameters\n    ----------\n"
_AFTER_PARAMETERS: Final = "\n    Raises\n    ------\n"
#: The docstring's width (the project's line length) and its entries' indents.
_WIDTH: Final = 110


def _cell(text: str) -> str:
    """``text`` inside a Markdown table cell (a ``|`` would end the cell)."""
    return text.replace("|", "\\|")


def _line(row: Setting, *, with_env: bool) -> str:
    limits = "; ".join(part for part in (row.limits_doc(), row.rule) if part)
    cells = [f"`{row.prop}`", f"`{row.type}`", row.default_doc, limits, row.doc]
    if with_env:
        cells.append(f"`{row.env}`" if row.env else "construct only")
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def render(*, with_env: bool) -> str:
    r"""The table of every prop, in the construct's keyword order.

    >>> render(with_env=True).splitlines()[0]
    '| prop | type | default | limits and rules | what | environment variable |'
    >>> line = next(line for line in render(with_env=False).splitlines() if "`reorder_limit`" in line)
    >>> line.split(" | ")[:4]
    ['| `reorder_limit`', '`int \\| None`', '`100` (state mode)', '1–1000']
    """
    header = ["prop", "type", "default", "limits and rules", "what"] + (
        ["environment variable"] if with_env else []
    )
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += [_line(row, with_env=with_env) for row in SETTINGS.values() if row.prop is not None]
    return "\n".join(lines)


def rewrite(text: str, *, with_env: bool) -> str:
    """``text`` with the table between its markers replaced by :func:`render`'s.

    Raises
    ------
    PropsTableMissingError
        ``text`` does not hold both markers, in order.
    """
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise PropsTableMissingError(
            f"no generated props table: the doc must hold the line {BEGIN!r} and, after it, {END!r}; "
            "add both where the table belongs and run "
            "python -m constructs_fifo.construct.settings.props_table"
        )
    return text[: start + len(BEGIN)] + "\n" + render(with_env=with_env) + "\n" + text[end:]


def _rst(markdown: str) -> str:
    """A row's Markdown as reStructuredText: ```x``` to ````x````."""
    return re.sub(r"(?<!`)`([^`]+)`(?!`)", r"``\1``", markdown)


def _sentence(text: str) -> str:
    text = _rst(text).strip()
    return (text[0].upper() + text[1:]).rstrip(".") + "."


def render_parameters() -> str:
    """The docstring's ``Parameters`` entries: ``scope, id``, then one per prop row in keyword order.

    >>> entry = render_parameters().split("    batch_size : ")[1].splitlines()
    >>> entry[0], entry[1].strip()
    ('int', "Records per invocation, or per container worker's receive. Limits: 1–10. Default: ``10``.")
    """
    entries = ["    scope, id\n        The parent construct and this construct's id."]
    for row in SETTINGS.values():
        if row.prop is None:
            continue
        limits = "; ".join(_rst(part) for part in (row.limits_doc(), row.rule) if part)
        body = " ".join(
            part
            for part in (
                _sentence(row.doc),
                f"Limits: {limits}." if limits else "",
                f"Default: {_rst(row.default_doc)}." if row.default_doc else "",
            )
            if part
        )
        wrapped = textwrap.fill(
            body, width=_WIDTH, initial_indent=" " * 8, subsequent_indent=" " * 8, break_on_hyphens=False
        )
        entries.append(f"    {row.prop} : {row.type}\n{wrapped}")
    return "\n".join(entries) + "\n"


def rewrite_parameters(source: str) -> str:
    """``source`` with its first class docstring's ``Parameters`` section replaced by
    :func:`render_parameters`'s.

    Raises
    ------
    PropsTableMissingError
        ``source`` has no ``Parameters`` section followed by a ``Raises`` section.
    """
    start = source.find(_PARAMETERS)
    end = source.find(_AFTER_PARAMETERS, start)
    if start < 0 or end < 0:
        raise PropsTableMissingError(
            "no Parameters section to write: the class docstring must hold a 'Parameters' heading and, "
            "after it, a 'Raises' heading; add both and run "
            "python -m constructs_fifo.construct.settings.props_table"
        )
    return source[: start + len(_PARAMETERS)] + render_parameters() + source[end:]


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite (or with ``--check`` compare) the tables of :data:`DOCS` under ``--root``."""
    parser = argparse.ArgumentParser(prog="python -m constructs_fifo.construct.settings.props_table")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository (default: here)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a table drifted")
    args = parser.parse_args(argv)
    drifted = []
    for name, with_env in DOCS.items():
        path = args.root / name
        text = path.read_text(encoding="utf-8")
        fresh = rewrite(text, with_env=with_env)
        if fresh == text:
            continue
        drifted.append(name)
        if not args.check:
            path.write_text(fresh, encoding="utf-8")
    for name in SOURCES:
        path = args.root / name
        text = path.read_text(encoding="utf-8")
        fresh = rewrite_parameters(text)
        if fresh == text:
            continue
        drifted.append(name)
        if not args.check:
            path.write_text(fresh, encoding="utf-8")
    for name in drifted:
        verb = "differs from the settings spec; run python -m constructs_fifo.construct.settings.props_table"
        print(f"{name}: props table {verb if args.check else 'rewritten'}")
    return 1 if args.check and drifted else 0


if __name__ == "__main__":  # pragma: no cover - the command
    sys.exit(main())
