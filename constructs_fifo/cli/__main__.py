"""``python -m constructs_fifo.cli``: the same as the ``constructs-fifo`` console script."""

from __future__ import annotations

from constructs_fifo.cli.app import main

if __name__ == "__main__":
    raise SystemExit(main())
