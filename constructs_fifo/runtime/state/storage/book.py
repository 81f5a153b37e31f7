"""The bookkeeping's JSON: how a group's :class:`~constructs_fifo.runtime.state.core.records.Bookkeeping`
is stored in its item's ``book`` attribute, and read back.

Compact on purpose (every write rewrites the whole item, 1 WCU per KB): short keys, empty parts
left out. Every dead job in it is the named object of the one dead-job codec
(:mod:`constructs_fifo.runtime.dead_jobs.record`). The format number ``f`` is raised on any incompatible
change; this runtime writes format 3 and still reads formats 1 and 2. The remembered job ids are
not in the JSON since format 3: they are 8-byte keys in the item's binary ``ids`` attribute
(:func:`encode_ids`), 800 bytes for 100 whatever the ids' length.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from constructs_fifo.runtime.constants import JOB_KEY_BYTES, STATE_BOOK_FORMAT
from constructs_fifo.runtime.dead_jobs.record import DeadJob, decode_dead_job, encode_dead_job
from constructs_fifo.runtime.state.core.records import (
    Bookkeeping,
    BufferedJob,
    CancelEntry,
    GroupState,
    SkippedRange,
    job_key,
)
from constructs_fifo.runtime.state.core.values import compact_json
from constructs_fifo.runtime.steering.names import STATE_ATTR_CANCELLED, STATE_ATTR_SUPERSEDE

__all__ = [
    "decode_book",
    "decode_cancelled",
    "decode_ids",
    "decode_newest",
    "decode_steering",
    "encode_book",
    "encode_cancelled",
    "encode_ids",
    "encode_newest",
    "encode_steering",
]

#: The bookkeeping formats this runtime reads: 1 (positional dead entries, before the dead-job codec),
#: 2 (plain job ids in ``ids``) and the one it writes.
_READABLE_BOOK_FORMATS = (1, 2, STATE_BOOK_FORMAT)


def encode_ids(keys: Sequence[str]) -> bytes:
    """The remembered keys (:func:`job_key`'s hex) as one binary value: ``JOB_KEY_BYTES`` bytes each."""
    return b"".join(bytes.fromhex(key) for key in keys)


def decode_ids(blob: bytes) -> tuple[str, ...]:
    """The keys of :func:`encode_ids`' value, oldest first.

    Raises
    ------
    ValueError
        The value's length is not a multiple of ``JOB_KEY_BYTES``.
    """
    if len(blob) % JOB_KEY_BYTES:
        raise ValueError(f"the remembered ids are {len(blob)} bytes, not a multiple of {JOB_KEY_BYTES}")
    return tuple(blob[start : start + JOB_KEY_BYTES].hex() for start in range(0, len(blob), JOB_KEY_BYTES))


def encode_book(book: Bookkeeping) -> str:
    """The bookkeeping as compact JSON; empty parts are left out.

    Every dead job in it (``deadWhy``, ``park``, each ``owed`` letter's ``dead``) is the named object
    of :func:`~constructs_fifo.runtime.dead_jobs.record.encode_dead_job`, and an owed letter is an object too
    (``seq``, ``messageId``, ``bufferedAt``, ``body``, ``dead``): format 2. Format 1 (positional
    lists) is still read, see :func:`decode_book`. A book without ``deadWhy`` reads as dead ids
    without entries, one without ``owed`` as nothing owed. ``text`` maps the message id of a
    buffered or owed job to its body exactly as sent, when that is not the compact encoding of its
    decoded body, so it reaches the dead-letter queue unchanged. The remembered ids (``book.applied``)
    are not in it: the store writes them in the item's binary ``ids`` (:func:`encode_ids`).
    """
    data: dict[str, Any] = {"f": STATE_BOOK_FORMAT}
    if book.last_seq is not None:
        data["seq"] = book.last_seq
    if book.buffer:
        data["buf"] = [[e.seq, e.message_id, e.buffered_at_ms, e.body] for e in book.buffer]
    if book.attempts:
        data["att"] = dict(book.attempts)
    if book.dead:
        data["dead"] = list(book.dead)
    if book.dead_entries:
        data["deadWhy"] = [encode_dead_job(entry) for entry in book.dead_entries]
    if book.parked is not None:
        data["park"] = encode_dead_job(book.parked)
    if book.skipped:
        data["skip"] = [[r.first, r.last, r.at_ms] for r in book.skipped]
    if book.gap_since_ms is not None:
        data["gap"] = book.gap_since_ms
    if book.owed:
        data["owed"] = [
            {"seq": e.seq, "messageId": e.message_id, "bufferedAt": e.buffered_at_ms, "body": e.body}
            | {"dead": encode_dead_job(dead)}
            for e, dead in book.owed
        ]
    texts = {
        e.message_id: e.body_text
        for e in [*book.buffer, *(entry for entry, _ in book.owed)]
        if e.body_text is not None and e.body_text != compact_json(e.body)
    }
    if texts:
        data["text"] = texts
    return compact_json(data)


def decode_book(text: str, *, ids: bytes = b"") -> Bookkeeping:
    """The :class:`Bookkeeping` of :func:`encode_book`'s JSON and the item's ``ids``, or of format 1's or 2's.

    Formats 1 and 2 hold the remembered ids as plain strings (``"ids"``): they are read as their keys
    (:func:`~constructs_fifo.runtime.state.core.records.job_key`), so such an item keeps recognising its
    duplicates.

    Format 1 (written by runtimes before the dead-job codec) stored each dead entry as a positional
    list, the parked entry with ``type`` for its job type, and each owed letter as ``[seq, messageId,
    bufferedAt, body, <dead entry>]``; the codec reads those as they are.

    Raises
    ------
    ValueError
        Not JSON, or a format this runtime does not know (a newer runtime wrote it).
    """
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"the bookkeeping is a JSON {type(data).__name__}, not an object")
    fmt = data.get("f", STATE_BOOK_FORMAT)
    if fmt not in _READABLE_BOOK_FORMATS:
        raise ValueError(
            f"bookkeeping format {fmt!r}; this runtime reads formats {list(_READABLE_BOOK_FORMATS)}"
        )
    texts: dict[str, str] = {str(k): str(v) for k, v in data.get("text", {}).items()}
    park = data.get("park")
    return Bookkeeping(
        applied=tuple(job_key(str(job_id)) for job_id in data.get("ids", ())) + decode_ids(ids),
        last_seq=data.get("seq"),
        buffer=tuple(
            BufferedJob(int(s), str(m), int(t), dict(b), texts.get(str(m)))
            for s, m, t, b in data.get("buf", ())
        ),
        attempts={str(k): int(v) for k, v in data.get("att", {}).items()},
        dead=tuple(data.get("dead", ())),
        dead_entries=tuple(decode_dead_job(entry) for entry in data.get("deadWhy", ())),
        parked=None if park is None else decode_dead_job(park),
        skipped=tuple(SkippedRange(int(a), int(b), int(t)) for a, b, t in data.get("skip", ())),
        gap_since_ms=data.get("gap"),
        owed=tuple(_owed_letter(letter, texts) for letter in data.get("owed", ())),
    )


def _owed_letter(letter: dict[str, Any] | list[Any], texts: dict[str, str]) -> tuple[BufferedJob, DeadJob]:
    """One owed letter of the bookkeeping: an object (format 2) or a positional list (format 1)."""
    if isinstance(letter, list):
        seq, message_id, buffered_at, body, dead = letter
    else:
        seq, message_id, buffered_at = letter["seq"], letter["messageId"], letter["bufferedAt"]
        body, dead = letter["body"], letter["dead"]
    entry = BufferedJob(int(seq), str(message_id), int(buffered_at), dict(body), texts.get(str(message_id)))
    return entry, decode_dead_job(dead)


def encode_cancelled(entries: Sequence[CancelEntry]) -> str:
    """The ``cancelled`` attribute's JSON: ``[[id, at_ms, reason, by], ...]``, oldest first."""
    rows = [[entry.job_id, entry.at_ms, entry.reason, entry.by] for entry in entries]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


def decode_cancelled(text: str | None) -> tuple[CancelEntry, ...]:
    """:func:`encode_cancelled`'s entries back (none for ``None``)."""
    if not text:
        return ()
    return tuple(CancelEntry(str(row[0]), int(row[1]), str(row[2]), str(row[3])) for row in json.loads(text))


def encode_newest(newest: Mapping[str, str]) -> str:
    """The ``supersede`` attribute's JSON: ``{key: newest job id}``, oldest marked first."""
    return json.dumps(dict(newest), ensure_ascii=False, separators=(",", ":"))


def decode_newest(text: str | None) -> dict[str, str]:
    """:func:`encode_newest`'s markers back (none for ``None``)."""
    if not text:
        return {}
    return {str(key): str(job_id) for key, job_id in json.loads(text).items()}


def encode_steering(group_state: GroupState) -> dict[str, Any]:
    """The state item's steering attributes (``cancelled``, ``supersede``): only those in use, so a
    group that is never steered carries none."""
    item: dict[str, Any] = {}
    if group_state.cancelled:
        item[STATE_ATTR_CANCELLED] = {"S": encode_cancelled(group_state.cancelled)}
    if group_state.newest:
        item[STATE_ATTR_SUPERSEDE] = {"S": encode_newest(group_state.newest)}
    return item


def decode_steering(item: Mapping[str, Any]) -> tuple[tuple[CancelEntry, ...], dict[str, str]]:
    """:func:`encode_steering`'s attributes back: the cancelled jobs and the supersede markers."""
    cancelled = decode_cancelled(item.get(STATE_ATTR_CANCELLED, {}).get("S"))
    return cancelled, decode_newest(item.get(STATE_ATTR_SUPERSEDE, {}).get("S"))
