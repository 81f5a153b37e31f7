"""Shared test settings: quiet jsii (markers are registered in pyproject.toml)."""

from __future__ import annotations

import os

# jsii prints a banner about Node 20 on every start; the tests do not need it.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
