"""How the runtime writes an error down: its text, cut to one length everywhere it is stored or sent.

Claim items, the group table's bookkeeping and park headers, and dead-letter attributes all keep an
error text of at most :data:`~constructs_fifo.runtime.constants.MAX_ERROR_LENGTH` characters, cut by
:func:`cut_error` (this is its one definition).
"""

from __future__ import annotations

from constructs_fifo.runtime.constants import MAX_ERROR_LENGTH

__all__ = ["cut_error", "describe", "error_text", "truncate_error"]


def cut_error(text: str) -> str:
    """``text`` cut to ``MAX_ERROR_LENGTH`` characters, its end marked with ``...`` when cut.

    Examples
    --------
    >>> len(cut_error("x" * 5000)), cut_error("x" * 5000)[-3:]
    (1024, '...')
    >>> cut_error("")
    ''
    """
    return text if len(text) <= MAX_ERROR_LENGTH else text[: MAX_ERROR_LENGTH - 3] + "..."


def truncate_error(text: str) -> str:
    """:func:`cut_error`, with ``(no message)`` for an empty text (SQS refuses empty attributes).

    Examples
    --------
    >>> len(truncate_error("x" * 5000))
    1024
    >>> truncate_error("")
    '(no message)'
    """
    return cut_error(text) if text else "(no message)"


def error_text(exc: BaseException) -> str:
    """An exception's text, or its ``repr`` when the text is empty (never cut: see :func:`cut_error`).

    Examples
    --------
    >>> error_text(ValueError()), error_text(ValueError("bad seq"))
    ('ValueError()', 'bad seq')
    """
    return str(exc) or repr(exc)


def describe(exc: BaseException) -> str:
    """``Type: text`` of an exception, as outcome lines show it.

    Examples
    --------
    >>> describe(KeyError("jobId"))
    "KeyError: 'jobId'"
    """
    return f"{type(exc).__name__}: {exc}"
