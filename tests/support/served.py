"""An app deployed to the local emulator the way a user deploys it, for tests/e2e and tests/examples.

The emulator starts as a user starts it (``constructs-fifo local serve``, a child process) and an app
deploys with ``constructs-fifo deploy`` (the real CDK CLI): :func:`serve` yields the running emulator,
:func:`deploy` deploys one app (the sample by default, an example with ``app_dir`` and ``stack``) to it.
One emulator can take several apps' stacks: the second deploy finds the environment bootstrapped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from constructs_fifo.local.emulator.launch import endpoint_from_ready_line
from constructs_fifo.stacks.aws import AwsTarget, free_port

__all__ = ["REGION", "ROOT", "Deployment", "Emulator", "deploy", "serve"]

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
#: How long ``local serve`` may take to print its ready line, and a deploy to finish.
SERVE_TIMEOUT_SECONDS = 60.0
DEPLOY_TIMEOUT_SECONDS = 600.0


@dataclass(frozen=True)
class Emulator:
    """A running ``constructs-fifo local serve``: its endpoint and how long it took to be ready."""

    endpoint_url: str
    serve_seconds: float

    @property
    def target(self) -> AwsTarget:
        """The emulator, with fake credentials."""
        return AwsTarget(self.endpoint_url, REGION, fake_credentials=True)


@dataclass(frozen=True)
class Deployment:
    """An app's stack on an emulator: the endpoint, the stack's outputs, how long each step took."""

    app_dir: Path
    endpoint_url: str
    outputs: dict[str, str]
    serve_seconds: float
    deploy_seconds: float

    @property
    def target(self) -> AwsTarget:
        """The emulator, with fake credentials."""
        return AwsTarget(self.endpoint_url, REGION, fake_credentials=True)


def _child_environment() -> dict[str, str]:
    return AwsTarget(None, REGION, fake_credentials=True).child_environment()


def _wait_ready(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        endpoint = endpoint_from_ready_line(line)
        if endpoint is not None:
            return endpoint
    raise RuntimeError(f"`constructs-fifo local serve` did not report ready: {''.join(seen)[-2000:]}")


@contextmanager
def serve(cwd: Path = ROOT) -> Iterator[Emulator]:
    """``constructs-fifo local serve`` on a free port, from ``cwd``; stopped (SIGTERM, SIGKILL) at exit."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "constructs_fifo.cli", "local", "serve", "--port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_child_environment(),
        cwd=cwd,
    )
    try:
        endpoint = _wait_ready(process, timeout=SERVE_TIMEOUT_SECONDS)
        yield Emulator(endpoint, time.perf_counter() - started)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def deploy(
    emulator: Emulator,
    *,
    app_dir: Path = ROOT,
    stack: str | None = None,
    app_environment: Mapping[str, str] | None = None,
) -> Deployment:
    """``constructs-fifo deploy`` of the app in ``app_dir`` (its ``stack`` only, when named) to ``emulator``.

    ``app_environment`` is added to the deploy's environment (the app reads it at synth).
    """
    env = _child_environment()
    command = [sys.executable, "-m", "constructs_fifo.cli", "deploy", "--endpoint-url", emulator.endpoint_url]
    if app_dir != ROOT:
        command += ["--app-dir", str(app_dir)]
    if stack is not None:
        command += ["--stack", stack]
    started = time.perf_counter()
    deployed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={
            **env,
            **(app_environment or {}),
            "PATH": f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}",
        },
        cwd=app_dir,
        timeout=DEPLOY_TIMEOUT_SECONDS,
        check=False,
    )
    assert deployed.returncode == 0, deployed.stderr[-3000:]
    return Deployment(
        app_dir=app_dir,
        endpoint_url=emulator.endpoint_url,
        outputs=json.loads(deployed.stdout),
        serve_seconds=emulator.serve_seconds,
        deploy_seconds=time.perf_counter() - started,
    )
