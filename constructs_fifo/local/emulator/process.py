"""The emulator as a child process: what ``constructs-fifo demo`` starts when given no endpoint.

A separate process keeps moto off the drain's GIL (2 cores). The child gets the environment of an
emulator the command started itself (fake credentials, no way to the user's profiles); its endpoint
is read from the ready line it prints. It runs in a process group of its own, so the terminal's
Ctrl-C reaches only the command, which stops its drains first and then the emulator (:meth:`stop`):
an emulator gone first would turn the drains' last calls into connection errors.

Examples
--------
>>> with EmulatorProcess() as emulator:  # doctest: +SKIP
...     print(emulator.endpoint_url)
http://localhost:38417
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from constructs_fifo.local.emulator.launch import endpoint_from_ready_line
from constructs_fifo.local.errors import EmulatorError
from constructs_fifo.stacks.aws import DEFAULT_REGION, AwsTarget, free_port
from constructs_fifo.stacks.extras import INSTALL_LOCAL_EXTRA

__all__ = ["EmulatorProcess"]


class EmulatorProcess:
    """The embedded emulator as a child process: ``python -m constructs_fifo.local.emulator``.

    Parameters
    ----------
    port
        Port to serve on; 0 picks a free one.
    region
        Region given to the child.
    startup_timeout
        Seconds to wait for the ready line before giving up.
    command
        The command to run instead of ``python -m constructs_fifo.local.emulator --port PORT`` (tests).

    Attributes
    ----------
    process
        The child once :meth:`start` ran (kept after :meth:`stop`, so its exit can be checked).
    """

    def __init__(
        self,
        port: int = 0,
        *,
        region: str = DEFAULT_REGION,
        startup_timeout: float = 60.0,
        command: Sequence[str] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.command = (
            list(command)
            if command is not None
            else [sys.executable, "-m", "constructs_fifo.local.emulator", "--port", str(self.port)]
        )
        self.region = region
        self.startup_timeout = startup_timeout
        self.endpoint_url = f"http://localhost:{self.port}"
        self.process: subprocess.Popen[str] | None = None
        self._output: list[str] = []

    def target(self) -> AwsTarget:
        """This emulator as a target: an emulator the command started, so fake credentials."""
        return AwsTarget.for_endpoint(self.endpoint_url, self.region, started_emulator=True)

    def start(self) -> str:
        """Start the child and return its endpoint URL once it reports ready.

        Raises
        ------
        EmulatorError
            When the child exits or stays silent past ``startup_timeout``.
        """
        process = subprocess.Popen(
            self.command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self.target().child_environment(),
            process_group=0,  # Ctrl-C is the command's to handle (module docstring)
        )
        self.process = process
        lines: queue.Queue[str | None] = queue.Queue()
        stdout = process.stdout
        assert stdout is not None  # Popen was given stdout=PIPE

        def pump() -> None:
            for line in stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=pump, name="emulator-output", daemon=True).start()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stop()
                raise EmulatorError(
                    f"the local emulator did not report ready on port {self.port} within "
                    f"{self.startup_timeout:.0f} s (last output: {self._last_output()})",
                    "run `constructs-fifo local serve --port 4566` to see why, then pass "
                    "--endpoint-url http://localhost:4566",
                )
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                code = process.wait()
                raise EmulatorError(
                    f"the local emulator exited with code {code} before it was ready "
                    f"(last output: {self._last_output()})",
                    f"check that the 'local' extra is installed ({INSTALL_LOCAL_EXTRA}) and run "
                    "`constructs-fifo local serve` to see the full error",
                )
            self._output.append(line)
            if endpoint_from_ready_line(line) is not None:
                return self.endpoint_url

    def _last_output(self) -> str:
        return self._output[-1] if self._output else "nothing"

    def stop(self) -> None:
        """Stop the child (terminate, then kill after 5 s); safe to call twice."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)

    def __enter__(self) -> EmulatorProcess:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
