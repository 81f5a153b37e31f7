"""``python -m constructs_fifo.local.emulator [--port N] [--host H]``: serve until interrupted."""

from __future__ import annotations

from constructs_fifo.local.emulator.server import main

if __name__ == "__main__":
    raise SystemExit(main())
