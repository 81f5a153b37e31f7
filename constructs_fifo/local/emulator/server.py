"""The local AWS emulator: moto's server, in this process, with the fidelity patches applied.

``constructs-fifo local serve`` runs it in the foreground; tests start it on a free port. The demo
runs it as a child process (see :mod:`~constructs_fifo.local.emulator.process`)::

    python -m constructs_fifo.local.emulator --port 4566

which prints ``constructs-fifo emulator ready at http://localhost:4566`` (the
:data:`~constructs_fifo.local.emulator.launch.READY_LINE`) once it answers, then once what a deploy
there does not apply (:mod:`~constructs_fifo.local.emulator.not_applied`, whose moto warnings it
keeps quiet), and serves until SIGINT or SIGTERM.

Examples
--------
>>> from constructs_fifo.local.emulator.server import LocalEmulator
>>> with LocalEmulator(port=0) as emu:  # doctest: +SKIP
...     sqs = emu.client("sqs")
...     sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
import threading
from types import FrameType, TracebackType
from typing import Any, Final

from moto.server import ThreadedMotoServer

from constructs_fifo.local.emulator import patches
from constructs_fifo.local.emulator.launch import DEFAULT_PORT, MAX_PORT, ready_line
from constructs_fifo.local.emulator.not_applied import notice, quiet_cloudformation_warnings
from constructs_fifo.local.errors import EmulatorError
from constructs_fifo.stacks.aws import DEFAULT_REGION, AwsTarget, free_port
from constructs_fifo.stacks.errors import CommandError

__all__ = ["LocalEmulator", "main", "serve_forever"]

#: The address a host name binds to (moto finds templates in its S3 only when the URL says localhost).
_LOOPBACK: Final = {"localhost": "127.0.0.1"}


class LocalEmulator:
    """moto's server plus the fidelity patches, running on a thread of this process.

    Parameters
    ----------
    port
        TCP port to listen on; ``0`` picks a free port (read it from :attr:`endpoint_url`).
    host
        Host name in :attr:`endpoint_url`. Keep ``"localhost"``: moto finds a CloudFormation
        template uploaded to its S3 only when the endpoint says ``localhost``.
    fidelity_patches
        Apply :mod:`~constructs_fifo.local.emulator.patches` (default). ``False`` serves moto as
        shipped, which only the conformance suite uses, to show what the patches correct.

    Examples
    --------
    >>> emu = LocalEmulator(port=0)  # doctest: +SKIP
    >>> emu.start()  # doctest: +SKIP
    >>> emu.endpoint_url  # doctest: +SKIP
    'http://localhost:38417'
    >>> emu.stop()  # doctest: +SKIP
    """

    def __init__(self, port: int = DEFAULT_PORT, host: str = "localhost", *, fidelity_patches: bool = True):
        if not 0 <= port <= MAX_PORT:
            raise EmulatorError(
                f"port {port} is outside 0-{MAX_PORT}", "pass a TCP port, or 0 for a free one"
            )
        self._requested_port = port
        self._host = host
        self._fidelity = fidelity_patches
        self._server: ThreadedMotoServer | None = None
        self._port: int | None = None

    @property
    def running(self) -> bool:
        """Whether :meth:`start` has run and :meth:`stop` has not."""
        return self._server is not None

    @property
    def port(self) -> int:
        """The port the server listens on (known once started)."""
        if self._port is None:
            raise EmulatorError("the emulator has no port yet", "call start() first (or use it as `with`)")
        return self._port

    @property
    def endpoint_url(self) -> str:
        """``http://HOST:PORT``, to pass as ``endpoint_url`` or ``AWS_ENDPOINT_URL``."""
        return f"http://{self._host}:{self.port}"

    def start(self) -> LocalEmulator:
        """Apply the fidelity patches and start the server; returns ``self``.

        Raises
        ------
        EmulatorError
            When the port is taken.
        UnsupportedMotoVersionError
            When moto is not the pinned version.
        """
        if self._server is not None:
            return self
        if self._fidelity:
            patches.apply()
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        bind = _LOOPBACK.get(self._host, self._host)
        port = self._requested_port or free_port(bind)
        if not _port_is_free(bind, port):
            raise EmulatorError(
                f"port {port} on {bind} is already in use",
                "stop what listens there, or pass another port (0 picks a free one)",
            )
        server = ThreadedMotoServer(ip_address=bind, port=port, verbose=False)
        server.start()
        self._server = server
        self._port = server.get_host_and_port()[1]
        return self

    def stop(self) -> None:
        """Stop the server (the fidelity patches stay applied for the rest of the process)."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def target(self, region: str = DEFAULT_REGION) -> AwsTarget:
        """This emulator as an :class:`~constructs_fifo.stacks.aws.AwsTarget` (fake credentials)."""
        return AwsTarget(self.endpoint_url, region, fake_credentials=True)

    def client(self, service: str, region_name: str = DEFAULT_REGION) -> Any:
        """A boto3 client for ``service`` pointing at this emulator, with fake credentials."""
        return self.target(region_name).client(service)

    def __enter__(self) -> LocalEmulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _port_is_free(bind: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((bind, port))
        except OSError:
            return False
        return True


def serve_forever(port: int = DEFAULT_PORT, host: str = "localhost") -> None:
    """Run the emulator in the foreground until SIGINT or SIGTERM.

    Prints the ready line (flushed) once it answers, then what a deploy there does not apply.
    """
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    quiet_cloudformation_warnings()
    try:
        with LocalEmulator(port=port, host=host) as emu:
            print(ready_line(emu.endpoint_url), flush=True)
            print(notice(), flush=True)
            while not stop.wait(0.5):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    """``python -m constructs_fifo.local.emulator [--port N] [--host H]``."""
    parser = argparse.ArgumentParser(
        prog="python -m constructs_fifo.local.emulator",
        description="Serve moto with the constructs-fifo fidelity patches until interrupted.",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port (0 picks a free one)")
    parser.add_argument("--host", default="localhost", help="host name in the endpoint URL")
    args = parser.parse_args(argv)
    try:
        serve_forever(port=args.port, host=args.host)
    except CommandError as err:
        print(f"constructs-fifo emulator: {err.one_line()}", file=sys.stderr)
        return 1
    return 0
