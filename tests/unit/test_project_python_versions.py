"""The Python versions the project says it supports: pyproject.toml's classifiers, from requires-python up
to the Lambda consumer's default runtime, and the CI workflow's matrix, which must test each of them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CLASSIFIER = "Programming Language :: Python :: "


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project


def _classified_versions() -> list[str]:
    names = [c.removeprefix(CLASSIFIER) for c in _project()["classifiers"] if c.startswith(CLASSIFIER)]
    return [name for name in names if "." in name]


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def test_the_classifiers_run_from_requires_python_to_the_functions_default_runtime() -> None:
    # GIVEN the lowest version requires-python accepts and the function's default runtime
    from constructs_fifo.construct.settings import defaults

    lowest = _project()["requires-python"].removeprefix(">=")
    lambda_default = defaults.FUNCTION_RUNTIME.name.removeprefix("python")

    # WHEN the classifiers are read
    versions = _classified_versions()

    # THEN they list every minor version between the two, with no gap
    expected = [f"3.{minor}" for minor in range(_minor(lowest), _minor(lambda_default) + 1)]
    assert versions == expected


def test_the_ci_matrix_tests_every_classified_version() -> None:
    # GIVEN the CI workflow
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())

    # WHEN its test job's matrix is read
    job = workflow["jobs"]["test"]
    matrix = job["strategy"]["matrix"]["python"]

    # THEN it is the classifiers' list, each row runs `make test` (the runtime's tests included) on it
    assert matrix == _classified_versions()
    assert job["steps"][1]["with"]["python-version"] == "${{ matrix.python }}"
    assert any(step.get("run") == "make test" for step in job["steps"])
