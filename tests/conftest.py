"""Shared test settings: quiet jsii, bounded Hypothesis runs, which tests share an xdist worker, and a
state directory of the session's own (markers are registered in pyproject.toml)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings
from support.budget import CI_PROFILE, loaded_profile

if TYPE_CHECKING:
    from xdist.remote import Producer
    from xdist.scheduler.protocol import Scheduling

# jsii prints a banner about Node 20 on every start; the tests do not need it.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

# Hypothesis: CI runs a bounded, reproducible number of examples (the slowest model properties a share of
# them: tests/support/budget.py); `make chaos` sets the chaos profile.
settings.register_profile(
    CI_PROFILE,
    max_examples=int(os.environ.get("CONSTRUCTS_FIFO_EXAMPLES", "30")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "chaos",
    max_examples=int(os.environ.get("CONSTRUCTS_FIFO_EXAMPLES", "500")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(loaded_profile())


@pytest.fixture
def patched_moto(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In-process moto as the emulator serves it (its fidelity patches), with fake credentials and no
    endpoint or profile of the caller's; the patches are reverted unless something applied them before."""
    from moto import mock_aws

    from constructs_fifo.local.emulator import patches

    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    already = patches.is_applied()
    patches.apply()
    try:
        with mock_aws():
            yield
    finally:
        if not already:
            patches.revert()


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises ``KeyboardInterrupt`` in this process, as it does at a terminal.

    A shell starts a background job (``make test &``, ``nohup``) with SIGINT ignored, and Python then
    keeps it ignored: a test of what Ctrl-C does would see nothing happen. Restored afterwards.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


#: The directories whose tests run on one worker, in collection order, under ``--dist loadfile``: their
#: session fixtures are costly or shared. tests/e2e starts one emulator and one CDK deploy for all its files,
#: and its deploys (the session's and the demo's) write the repository's cdk.out; tests/examples starts one
#: emulator for the examples it deploys; tests/infrastructure synthesizes the sample's stacks once;
#: tests/conformance starts one emulator.
ONE_WORKER_DIRECTORIES = ("tests/e2e/", "tests/examples/", "tests/infrastructure/", "tests/conformance/")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> Scheduling | None:
    """``--dist loadfile``, with each of :data:`ONE_WORKER_DIRECTORIES` one unit of work.

    Every other file stays one unit (its module fixtures are built once). Node ids stay as they are, so a
    failure reads as in a serial run (``xdist_group`` would suffix every id with ``@group``).
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class DirectoryOrFileScheduling(LoadFileScheduling):  # type: ignore[misc]  # xdist ships no types
        def _split_scope(self, nodeid: str) -> str:
            for directory in ONE_WORKER_DIRECTORIES:
                if nodeid.startswith(directory):
                    return directory
            return nodeid.split("::", 1)[0]  # the file, as loadfile splits it

    return DirectoryOrFileScheduling(config, log)


@pytest.fixture(autouse=True, scope="session")
def _own_state_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``XDG_STATE_HOME`` in the session's temporary directory (each xdist worker has its own).

    The drains' function logs go there (constructs_fifo/local/event_source/function_log.py): numbered per
    project directory and pruned to the newest 10, so two workers draining from the repository would
    prune each other's logs; nor do the tests fill the user's own state directory.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
        yield
