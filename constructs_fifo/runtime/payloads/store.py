"""The runtime's side of the payload bucket: a pointer body resolved, a large result put.

One :class:`PayloadStore` per process (:func:`default_store`), reading the bucket's name from
``CONSTRUCTS_FIFO_PAYLOAD_BUCKET`` and making its S3 client only on first need: a queue without
``large_payloads`` never meets a pointer and never puts a result, so it makes no client and sends no
request (figure 1 unchanged). Tests and benchmarks pass their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from constructs_fifo.runtime.constants import MAX_RESULT_BYTES
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.payloads.pointer import (
    ENV_PAYLOAD_BUCKET,
    MissingPayloadError,
    new_key,
    parse_pointer,
    pointer_body,
    read_object,
)

__all__ = ["PayloadStore", "default_store", "resolved_body"]


def _runtime_s3() -> Any:
    from constructs_fifo.runtime.aws_clients import runtime_client  # noqa: PLC0415 - only on a pointer

    return runtime_client("s3")


class PayloadStore:
    """Reads pointer bodies and puts large results (see the module docstring).

    Parameters
    ----------
    bucket:
        The payload bucket; ``None``: the queue has none (results over 64 KiB are not stored; a pointer
        body met is still read from the bucket it names).
    s3:
        An S3 client; by default ``make_s3()`` on first need.
    """

    def __init__(
        self, bucket: str | None, s3: Any | None = None, make_s3: Callable[[], Any] = _runtime_s3
    ) -> None:
        self.bucket = bucket or None
        self._s3 = s3
        self._make_s3 = make_s3

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> PayloadStore:
        """The store of the bucket ``CONSTRUCTS_FIFO_PAYLOAD_BUCKET`` names (none when unset)."""
        return cls(environ.get(ENV_PAYLOAD_BUCKET))

    def _client(self) -> Any:
        if self._s3 is None:
            self._s3 = self._make_s3()
        return self._s3

    def resolve_body(self, raw: Any) -> Any:
        """``raw`` itself, or the body a pointer names (read from S3).

        Raises
        ------
        MissingPayloadError
            The object is not there.
        """
        pointer = parse_pointer(raw)
        if pointer is None:
            return raw
        return read_object(self._client(), *pointer)

    def put_result(self, text: str) -> str | None:
        """Put a result's JSON larger than ``MAX_RESULT_BYTES`` in the bucket; its pointer body, or ``None``
        (no bucket, or small enough for the claim)."""
        data = text.encode("utf-8")
        if self.bucket is None or len(data) <= MAX_RESULT_BYTES:
            return None
        key = new_key()
        self._client().put_object(Bucket=self.bucket, Key=key, Body=data)
        return pointer_body(self.bucket, key)


_DEFAULT: list[PayloadStore] = []


def default_store() -> PayloadStore:
    """The process's store, from its environment (made once; its client only on first need)."""
    if not _DEFAULT:
        _DEFAULT.append(PayloadStore.from_environment(os.environ))
    return _DEFAULT[0]


def resolved_body(record: Mapping[str, Any], payloads: PayloadStore | None) -> Any:
    """The record's body, or the body its Extended Client pointer names (``payloads``, else
    :func:`default_store`, read only when the body is a pointer).

    Raises
    ------
    MalformedJobError
        The pointer's object is not there: permanent (the same read fails every time).
    """
    raw = record.get("body", "")
    if parse_pointer(raw) is None:
        return raw
    try:
        return (payloads or default_store()).resolve_body(raw)
    except MissingPayloadError as exc:
        raise MalformedJobError(f"message {record.get('messageId', '')}: {exc}") from None
