"""Each example deployed to an emulator of its own, once per test file.

The emulator starts as a user starts it (``constructs-fifo local serve``) and the example deploys from
its own directory with ``constructs-fifo deploy --app-dir examples/<name>`` (the real CDK CLI). A test
file is one unit of ``make test``'s workers (``--dist loadfile``), so the examples' files run beside the
rest of the suite, each with its own emulator and port.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from constructs_fifo.local.emulator.launch import endpoint_from_ready_line
from constructs_fifo.stacks.aws import AwsTarget, free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
REGION = "us-east-1"
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


@dataclass(frozen=True)
class DeployedExample:
    """An example's stack on its emulator: the endpoint, the stack's outputs, how long each step took."""

    app_dir: Path
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


@contextmanager
def deployed_example(
    name: str, stack: str, *, app_environment: Mapping[str, str] | None = None
) -> Iterator[DeployedExample]:
    """``constructs-fifo local serve``, then ``constructs-fifo deploy --app-dir examples/<name> --stack``.

    ``app_environment`` is added to the deploy's environment (the app reads it at synth).
    """
    app_dir = EXAMPLES / name
    port = free_port()
    env = AwsTarget(None, REGION, fake_credentials=True).child_environment()
    started = time.perf_counter()
    serve = subprocess.Popen(
        [sys.executable, "-m", "constructs_fifo.cli", "local", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=app_dir,
    )
    try:
        endpoint = _wait_ready(serve, timeout=60)
        serve_seconds = time.perf_counter() - started
        started = time.perf_counter()
        deployed = subprocess.run(
            [
                sys.executable,
                "-m",
                "constructs_fifo.cli",
                "deploy",
                "--endpoint-url",
                endpoint,
                "--app-dir",
                str(app_dir),
                "--stack",
                stack,
            ],
            capture_output=True,
            text=True,
            env={
                **env,
                **(app_environment or {}),
                "PATH": f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{env.get('PATH', '')}",
            },
            cwd=app_dir,
            timeout=600,
            check=False,
        )
        assert deployed.returncode == 0, deployed.stderr[-3000:]
        yield DeployedExample(
            app_dir=app_dir,
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
