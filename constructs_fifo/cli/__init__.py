"""The ``constructs-fifo`` command line (see :mod:`constructs_fifo.cli.app` for commands and exit codes)."""

from __future__ import annotations

from constructs_fifo.cli.app import (
    EXIT_ENVIRONMENT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VIOLATIONS,
    build_parser,
    main,
)

__all__ = [
    "EXIT_ENVIRONMENT",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_VIOLATIONS",
    "build_parser",
    "main",
]
