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

import importlib.util
from typing import Final

from constructs_fifo.local.errors import MissingExtraError

__all__ = [
    "DEFAULT_PORT",
    "INSTALL_LOCAL_EXTRA",
    "MAX_PORT",
    "READY_LINE",
    "SERVER_PACKAGES",
    "endpoint_from_ready_line",
    "missing_server_packages",
    "ready_line",
    "require_server_packages",
]

#: The port AWS-emulating tools conventionally use.
DEFAULT_PORT: Final = 4566
#: The highest TCP port (0 asks for a free one).
MAX_PORT: Final = 65535
#: What the server prints (flushed) once it answers: the one statement of the ready line.
READY_LINE: Final = "constructs-fifo emulator ready at {url}"
#: The command that installs what the emulator needs.
INSTALL_LOCAL_EXTRA: Final = "pip install 'constructs-fifo[local]'"
#: Import names of the packages moto's server needs (moto, and flask for ``moto[server]``).
SERVER_PACKAGES: Final = ("moto", "flask")

_READY_PREFIX: Final = READY_LINE.split("{url}", 1)[0]


def ready_line(url: str) -> str:
    """The line the server prints once it answers at ``url``."""
    return READY_LINE.format(url=url)


def endpoint_from_ready_line(line: str) -> str | None:
    """The endpoint URL in a ready line, or ``None`` when ``line`` is another line."""
    _, found, rest = line.partition(_READY_PREFIX)
    return rest.strip() or None if found else None


def missing_server_packages() -> list[str]:
    """The emulator's packages this installation lacks (looked up without importing them: importing
    moto takes seconds)."""
    return [name for name in SERVER_PACKAGES if importlib.util.find_spec(name) is None]


def require_server_packages() -> None:
    """Raise :class:`MissingExtraError` unless the emulator's packages can be imported."""
    missing = missing_server_packages()
    if missing:
        raise MissingExtraError(
            f"the local emulator needs {', '.join(missing)}, which this installation lacks "
            "(they come with the 'local' extra)",
            INSTALL_LOCAL_EXTRA,
        )
