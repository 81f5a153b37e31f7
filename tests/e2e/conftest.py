"""One emulator and one deployment per session for the end-to-end tests.

The emulator is started the way a user starts it, ``constructs-fifo local serve``, and the sample
app is deployed with ``constructs-fifo deploy`` (the real CDK CLI). Every test then reuses that
deployment with its own seed, so workspaces and job ids never collide.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from constructs_fifo.local.emulator.launch import endpoint_from_ready_line
from constructs_fifo.stacks.aws import AwsTarget, free_port

ROOT = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
#: What a deploy leaves behind (the CDK's assets hold copies of the package): never collected, or a second
#: run of these tests fails at collection with --doctest-modules.
collect_ignore_glob = ["*/cdk.out/*"]
#: Not collected by ``--doctest-modules``: it imports the deployed job code, present only when the
#: runner copies it next to that code.
collect_ignore = ["naive_consumer.py"]


@dataclass(frozen=True)
class Deployment:
    """The session's emulator and the sample stack's outputs."""

    endpoint_url: str
    outputs: dict[str, str]
    serve_seconds: float
    deploy_seconds: float

    @property
    def target(self) -> AwsTarget:
        """The emulator, with fake credentials."""
        return AwsTarget(self.endpoint_url, REGION, fake_credentials=True)


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


@pytest.fixture(scope="session")
def deployment() -> Iterator[Deployment]:
    """``constructs-fifo local serve`` + ``constructs-fifo deploy``, once per session."""
    port = free_port()
    env = AwsTarget(None, REGION, fake_credentials=True).child_environment()
    started = time.perf_counter()
    serve = subprocess.Popen(
        [sys.executable, "-m", "constructs_fifo.cli", "local", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        endpoint = _wait_ready(serve, timeout=60)
        serve_seconds = time.perf_counter() - started
        started = time.perf_counter()
        deployed = subprocess.run(
            [sys.executable, "-m", "constructs_fifo.cli", "deploy", "--endpoint-url", endpoint],
            capture_output=True,
            text=True,
            env={**env, "PATH": f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}"},
            cwd=ROOT,
            timeout=600,
            check=False,
        )
        assert deployed.returncode == 0, deployed.stderr[-3000:]
        yield Deployment(
            endpoint_url=endpoint,
            outputs=json.loads(deployed.stdout),
            serve_seconds=serve_seconds,
            deploy_seconds=time.perf_counter() - started,
        )
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=10)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait(timeout=10)
