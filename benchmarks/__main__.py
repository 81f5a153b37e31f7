"""``python -m benchmarks``: run the runtime benchmark (``make bench``)."""

from __future__ import annotations

import sys

from benchmarks.runtime_throughput import main

sys.exit(main())
