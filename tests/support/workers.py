"""``constructs-fifo worker`` processes as the container tasks run them, for tests/e2e and tests/examples."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from support.served import Deployment

__all__ = ["WorkerProcess", "start_worker"]


@dataclass
class WorkerProcess:
    """One ``constructs-fifo worker`` process and its log (stdout and stderr)."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def succeeded(self) -> list[str]:
        """The job ids this worker logged as SUCCEEDED (one outcome line per run)."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            if not line.startswith("{"):
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("status") == "SUCCEEDED" and "jobId" in entry:
                found.append(str(entry["jobId"]))
        return found


def start_worker(
    deployment: Deployment,
    log_dir: Path,
    name: str,
    *,
    stack: str,
    queue: str,
    code_dir: Path,
    slots: int,
    grace_seconds: float,
    extra: Sequence[str] = (),
) -> WorkerProcess:
    """``constructs-fifo worker --stack STACK --queue QUEUE --code-dir CODE_DIR`` on ``deployment``, one
    record a receive and 1 s receive waits, from the app's directory; its output in ``log_dir/<name>.log``."""
    log = log_dir / f"{name}.log"
    command = [
        sys.executable, "-m", "constructs_fifo.cli", "worker",
        "--endpoint-url", deployment.endpoint_url, "--stack", stack, "--queue", queue,
        "--code-dir", str(code_dir), "--slots", str(slots), "--batch-size", "1", "--wait-time-seconds", "1",
        "--grace-seconds", str(grace_seconds), *extra,
    ]  # fmt: skip
    env = {**deployment.target.child_environment(), "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=deployment.app_dir
        )
    return WorkerProcess(name, process, log)
