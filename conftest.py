"""Repository-wide pytest options: ``--aws`` and its skip logic (markers live in pyproject.toml).

``pytest_addoption`` only works in an initial conftest, hence this file at the repository root.

- Without ``--aws`` (the default, and CI): tests marked ``aws`` are skipped; the conformance suite
  runs against the local emulator.
- With ``--aws``: the conformance suite runs against real AWS with the default boto3 credentials and
  region; tests marked ``emulator_only`` (they pin what the emulator itself does) are skipped.
"""

from __future__ import annotations

import pytest

__all__ = ["pytest_addoption", "pytest_collection_modifyitems"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--aws",
        action="store_true",
        default=False,
        help="run the conformance suite (and tests marked 'aws') against real AWS with the default "
        "boto3 credentials and region; creates and deletes uniquely named resources",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    on_aws = bool(config.getoption("--aws"))
    skip_aws = pytest.mark.skip(reason="needs real AWS: run with --aws")
    skip_emulator = pytest.mark.skip(reason="emulator-only behaviour: not run with --aws")
    for item in items:
        if not on_aws and "aws" in item.keywords:
            item.add_marker(skip_aws)
        if on_aws and "emulator_only" in item.keywords:
            item.add_marker(skip_emulator)
