"""The record of what the fidelity patches replaced, so they can be applied once and undone.

Every patch goes through :func:`replace`, which remembers the original attribute (or that there was
none); :func:`original` returns it to a patch that wraps it; :func:`revert` puts moto back as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["is_applied", "original", "replace", "revert"]

# (owner, attribute name) -> original value, so revert() can put moto back as it was.
_ORIGINALS: dict[tuple[Any, str], Any] = {}
_ABSENT = object()  # marks an attribute the patches added (revert deletes it)


def replace(owner: Any, name: str, replacement: Callable[..., Any] | Any) -> None:
    """Set ``owner.name`` to ``replacement``, remembering what was there."""
    _ORIGINALS[(owner, name)] = owner.__dict__.get(name, _ABSENT)
    setattr(owner, name, replacement)


def original(owner: Any, name: str) -> Any:
    """What ``owner.name`` was before :func:`replace`."""
    return _ORIGINALS[(owner, name)]


def is_applied() -> bool:
    """Whether any patch is in place."""
    return bool(_ORIGINALS)


def revert() -> None:
    """Undo every :func:`replace` (state already in moto's backends stays)."""
    for (owner, name), value in _ORIGINALS.items():
        if value is _ABSENT:
            delattr(owner, name)
        else:
            setattr(owner, name, value)
    _ORIGINALS.clear()
