"""One synthesized app for every template test (jsii starts Node once per process; synth is slow)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from .stacks import Synthesized, build_synthesized
from .workers import WorkersSynthesized, build_workers


@pytest.fixture(scope="session")
def synthesized() -> Synthesized:
    """The sample, variant and risky stacks, synthesized once per test session."""
    _require_aws_cdk_libs_cloud_assembly_schema()
    return build_synthesized()


def _require_aws_cdk_libs_cloud_assembly_schema() -> None:
    """Stop with the cause and the fix when ``aws_cdk/cloud_assembly_schema`` is not aws-cdk-lib's copy.

    aws-cdk-lib and aws-cdk.cloud-assembly-schema both install that file; an installer that unpacks wheels
    in parallel (uv) can leave the schema package's copy, and then every ``Annotations.find_warning`` fails
    with "Unknown interface: aws-cdk-lib.cloud_assembly_schema.MetadataEntry". ``make setup`` repairs it.
    """
    spec = importlib.util.find_spec("aws_cdk")
    assert spec is not None and spec.submodule_search_locations is not None
    schema = Path(next(iter(spec.submodule_search_locations)), "cloud_assembly_schema", "__init__.py")
    if "aws-cdk-lib.cloud_assembly_schema" not in schema.read_text(encoding="utf-8"):
        pytest.fail(
            f"{schema} is aws-cdk.cloud-assembly-schema's copy, not aws-cdk-lib's: template tests that read "
            "annotations cannot run. Fix: pip install --force-reinstall --no-deps aws-cdk-lib==<installed "
            "version> (or rm .venv/.installed && make setup)",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def workers() -> WorkersSynthesized:
    """The container consumer's stacks, synthesized once per test session."""
    _require_aws_cdk_libs_cloud_assembly_schema()
    return build_workers()
