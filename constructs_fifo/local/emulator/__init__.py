"""The local AWS emulator: moto's server with fidelity patches (install ``constructs-fifo[local]``).

- :mod:`~constructs_fifo.local.emulator.launch`: how the emulator announces itself and what it needs
  installed (no moto import: the demo and the CLI read it before starting one);
- :mod:`~constructs_fifo.local.emulator.server`: :class:`LocalEmulator`, in this process;
- :mod:`~constructs_fifo.local.emulator.process`: the emulator as a child process (the demo's);
- :mod:`~constructs_fifo.local.emulator.patches`: the fidelity patches, split as moto splits.

``python -m constructs_fifo.local.emulator --port 4566`` serves until SIGINT or SIGTERM. This package
imports nothing itself, so ``import constructs_fifo.local.emulator`` never loads moto.
"""

from __future__ import annotations

__all__: list[str] = []
