"""``python -m benchmarks``: run the runtime benchmark (``make bench``); ``--help`` for options."""

from __future__ import annotations

import sys

from benchmarks.report import main

sys.exit(main(sys.argv[1:]))
