"""docs/limits.md against the code: every number in its table is the constant or settings row it names,
and every limit a user meets is there."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from constructs_fifo.runtime.settings.spec import SETTINGS

DOC = Path(__file__).resolve().parents[2] / "docs" / "limits.md"
README = DOC.parents[1] / "README.md"
_SETTING = re.compile(r'SETTINGS\["(?P<name>\w+)"\]\.(?P<side>low|high)')
_CONSTANT = re.compile(r"(?P<module>constructs_fifo(?:\.\w+)+)\.(?P<name>[A-Z][A-Z0-9_]*)")
_NUMBER = re.compile(r"\d[\d,]*")
#: Every limit a user meets, by what ``defined in`` names: the issue's list, and the client's exports.
REQUIRED = {
    "constructs_fifo.runtime.aws_limits.SQS_MAX_MESSAGE_BYTES",
    "constructs_fifo.runtime.aws_limits.SQS_MAX_BATCH_ENTRIES",
    "constructs_fifo.runtime.aws_limits.SQS_MAX_ID_LENGTH",
    "constructs_fifo.client.limits.MAX_ID_LENGTH",
    "constructs_fifo.runtime.constants.MAX_RESULT_BYTES",
    "constructs_fifo.runtime.constants.MAX_ITEM_BYTES",
    "constructs_fifo.runtime.aws_limits.SQS_FIFO_MAX_IN_FLIGHT_MESSAGES",
    "constructs_fifo.runtime.aws_limits.SQS_MAX_VISIBILITY_TIMEOUT_SECONDS",
    "constructs_fifo.runtime.aws_limits.LAMBDA_MAX_TIMEOUT_SECONDS",
    'SETTINGS["max_job_duration"].high',
}


def _rows() -> list[dict[str, str]]:
    lines = [line for line in DOC.read_text().splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [
        dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        for line in lines[2:]
    ]


def _value(defined_in: str) -> Any:
    name = defined_in.strip("`")
    if setting := _SETTING.fullmatch(name):
        return getattr(SETTINGS[setting["name"]], setting["side"])
    constant = _CONSTANT.fullmatch(name)
    assert constant is not None, f"{defined_in!r} names no constant nor settings row"
    return getattr(importlib.import_module(constant["module"]), constant["name"])


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row["limit"][:40])
def test_each_number_in_the_limits_table_is_the_one_the_code_reads(row: dict[str, str]) -> None:
    # GIVEN a row of docs/limits.md WHEN its value is read next to the constant it names
    number = _NUMBER.search(row["value"])
    assert number is not None, row
    # THEN they are the same number, and the row says what happens at the limit and the fix
    assert int(number.group().replace(",", "")) == _value(row["defined in"]), row
    assert row["what happens at it"] and row["fix"], row


def test_every_limit_a_user_meets_is_in_the_table_and_the_readme_links_it() -> None:
    # GIVEN the table's rows WHEN their sources are collected
    named = {row["defined in"].strip("`") for row in _rows()}
    # THEN the list is there (message, result, state item, batch, group and job ids, in-flight
    # messages, visibility, job duration), and the README links the page
    assert named >= REQUIRED, REQUIRED - named
    assert "(docs/limits.md)" in README.read_text()
