"""How the emulator is launched and announces itself, without importing moto.

The server prints :func:`ready_line` once it answers; whoever started it (the demo, the end-to-end
tests, a script) reads the endpoint back with :func:`endpoint_from_ready_line`. Before starting one,
:func:`require_server_packages` checks that the ``local`` extra is installed, so a plain install says
what to install instead of failing in a child process.

Examples
--------
>>> endpoint_from_ready_line(ready_line("http://localhost:4566"))
'http://localhost:4566'
"""

from __future__ import annotations

from typing import Final

from constructs_fifo.stacks.errors import MissingExtraError
from constructs_fifo.stacks.extras import INSTALL_LOCAL_EXTRA, missing_server_packages

__all__ = [
    "DEFAULT_PORT",
    "MAX_PORT",
    "READY_LINE",
    "endpoint_from_ready_line",
    "ready_line",
    "require_server_packages",
]

#: The port AWS-emulating tools conventionally use.
DEFAULT_PORT: Final = 4566
#: The highest TCP port (0 asks for a free one).
MAX_PORT: Final = 65535
#: What the server prints (flushed) once it answers: the one statement of the ready line.
READY_LINE: Final = "constructs-fifo emulator ready at {url}"

_READY_PREFIX: Final = READY_LINE.split("{url}", 1)[0]


def ready_line(url: str) -> str:
    """The line the server prints once it answers at ``url``."""
    return READY_LINE.format(url=url)


def endpoint_from_ready_line(line: str) -> str | None:
    """The endpoint URL in a ready line, or ``None`` when ``line`` is another line."""
    _, found, rest = line.partition(_READY_PREFIX)
    return rest.strip() or None if found else None


def require_server_packages() -> None:
    """Raise :class:`MissingExtraError` unless the emulator's packages can be imported."""
    missing = missing_server_packages()
    if missing:
        raise MissingExtraError(
            f"the local emulator needs {', '.join(missing)}, which this installation lacks "
            "(they come with the 'local' extra)",
            INSTALL_LOCAL_EXTRA,
        )
