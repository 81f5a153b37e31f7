"""What the ``local`` extra brings, and whether this installation has it (looked up without importing).

The emulator needs it to start; the environment errors of :mod:`~constructs_fifo.stacks.aws_errors`
name it when a local endpoint does not answer. Importing moto takes seconds, so nothing here does.
"""

from __future__ import annotations

import importlib.util
from typing import Final

__all__ = ["INSTALL_LOCAL_EXTRA", "SERVER_PACKAGES", "missing_server_packages"]

#: The command that installs what the emulator needs.
INSTALL_LOCAL_EXTRA: Final = "pip install 'constructs-fifo[local]'"
#: Import names of the packages moto's server needs (moto, and flask for ``moto[server]``).
SERVER_PACKAGES: Final = ("moto", "flask")


def missing_server_packages() -> list[str]:
    """The emulator's packages this installation lacks (looked up without importing them: importing
    moto takes seconds)."""
    return [name for name in SERVER_PACKAGES if importlib.util.find_spec(name) is None]
