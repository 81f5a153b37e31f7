"""The examples deployed to one emulator, each example's stack once.

The emulator starts as a user starts it (``constructs-fifo local serve``), once for the directory (a
session fixture: tests/conftest.py makes tests/examples one unit of ``make test``'s workers, so its
files share one worker and this emulator), and each example deploys its stack from its own directory
with ``constructs-fifo deploy --app-dir examples/<name> --stack`` (the real CDK CLI) when its test file
first asks (:func:`deployed_example`). The examples' stacks and names are their own, so they share the
emulator as two apps share an account.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator, Mapping
from types import ModuleType

import pytest
from support.served import ROOT, Deployment, Emulator, deploy, serve

__all__ = ["EXAMPLES", "Deployment", "Emulator", "deployed_example", "examples_emulator", "load_job_module"]

EXAMPLES = ROOT / "examples"
#: What a deploy leaves behind in an example's directory (the assets hold copies of the package).
collect_ignore_glob = ["*/cdk.out/*"]


def load_job_module(example: str, name: str) -> ModuleType:
    """A module of an example's job code, loaded from its file as ``example_<example>_<name>``.

    Job code ships in the function's asset or the image, not in the package, and imports its siblings
    by their own names (``from workspace_store import ...``): the job directory is on ``sys.path`` while
    the module loads, as the runtime puts it there.
    """
    jobs = EXAMPLES / example / "jobs"
    spec = importlib.util.spec_from_file_location(f"example_{example}_{name}", jobs / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(jobs))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(jobs))
    return module


@pytest.fixture(scope="session")
def examples_emulator() -> Iterator[Emulator]:
    """``constructs-fifo local serve``, once for every example deployed in the session."""
    with serve() as emulator:
        yield emulator


def deployed_example(
    emulator: Emulator, name: str, stack: str, *, app_environment: Mapping[str, str] | None = None
) -> Deployment:
    """``constructs-fifo deploy --app-dir examples/<name> --stack <stack>`` to ``emulator``.

    ``app_environment`` is added to the deploy's environment (the app reads it at synth).
    """
    return deploy(emulator, app_dir=EXAMPLES / name, stack=stack, app_environment=app_environment)
