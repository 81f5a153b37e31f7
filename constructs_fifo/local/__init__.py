"""The local AWS emulator: moto's server with fidelity patches (install ``constructs-fifo[local]``).

Import :class:`~constructs_fifo.local.emulator.LocalEmulator` from
:mod:`constructs_fifo.local.emulator`; :mod:`constructs_fifo.local.fidelity` holds the patches.
This package imports nothing itself, so ``import constructs_fifo.local`` never loads moto.
"""

from __future__ import annotations

__all__: list[str] = []
