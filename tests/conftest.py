"""Shared test settings for the construct side: quiet jsii and the ``packaging`` marker."""

from __future__ import annotations

import os

import pytest

# jsii prints a banner about Node 20 on every start; the tests do not need it.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

__all__ = ["pytest_configure"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "packaging: builds the wheel and synthesizes a consumer app in a fresh venv (~30 s)"
    )
