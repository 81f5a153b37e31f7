"""The group table's state items: one read for a batch's groups, one conditional write per group.

Item layout (partition key ``group``, sort key ``sk``; other sort keys of the table belong to parked
groups and are not touched here):

=============  ====  =============================================================================
attribute      type  meaning
=============  ====  =============================================================================
``group``      S     the ``MessageGroupId``
``sk``         S     ``"state"``
``state``      S     the user's state as JSON; absent until a transition was applied
``book``       S     the runtime's bookkeeping as compact JSON (:func:`encode_book`, format ``f: 3``)
``ids``        B     the keys of the remembered job ids (:func:`encode_ids`); absent when none
``version``    N     1 on the first write, one more on every write
``updated_at`` N     epoch ms of the write
``run``        S     a run marker (:mod:`~constructs_fifo.runtime.state.crash_watch`); absent after a commit
``cancelled``  S     the cancelled jobs (:mod:`~constructs_fifo.runtime.state.storage.cancels`); absent: none
``supersede``  S     supersede markers (:mod:`~constructs_fifo.runtime.state.storage.supersede`); absent: none
=============  ====  =============================================================================

Why JSON strings and not DynamoDB maps: a map gives every number back as a ``Decimal`` (an int too)
and holds at most 38 digits; NaN, tuples and sets are refused or change type; and the item's size is
only known after DynamoDB has counted it. A JSON string gives the transition back exactly what it
returned, reads the same from any language, and has a size known before the write. What it costs:
no attribute-level queries or updates, which state mode never makes (it reads and writes whole items).

Rules:

1. **Read.** :meth:`StateStore.load` reads every group of a batch in one ``BatchGetItem`` with
   ``ConsistentRead`` (chunks of 100 keys), retrying ``UnprocessedKeys`` with backoff. A group
   without an item is ``GroupState(group)``: version 0, no state.
   :meth:`StateStore.load_with_park_headers` reads the groups' park headers (``sk = "park"``, see
   :mod:`constructs_fifo.runtime.dead_jobs.parking`) in the same call, and :meth:`StateStore.load_for_batch`
   also the run items (``sk = "run"``) of the groups it is asked to (the redelivered ones).
2. **Write.** :meth:`StateStore.commit` writes the whole item with one ``PutItem``, conditioned on
   ``attribute_not_exists(#group)`` when the state was read at version 0 and on
   ``#version = :expected`` otherwise, and writes ``expected + 1``. A failed condition (another worker
   committed first) returns ``False`` and commits nothing: the caller reports the group's records
   failed, and the retry starts from the state that won. :meth:`StateStore.put_request` gives the
   same parameters, so the write can also be a ``Put`` of a ``TransactWriteItems``: ``commit`` with
   ``with_items`` writes the state and a parked group's items in one transaction. With ``run`` the
   item carries a run marker; without it the write removes any. :meth:`StateStore.mark_run` writes the
   group's run item (:mod:`~constructs_fifo.runtime.state.storage.runs`), not this one: a marker costs
   one write unit, whatever the state's size.
3. **Bounded bookkeeping.** Jobs without ``seq`` are remembered by key (8 bytes of SHA-256,
   :func:`~constructs_fifo.runtime.state.core.records.job_key`), at most 100: ``ids`` takes at most 800
   bytes, whatever the ids. Every other part of the bookkeeping is left out while it is empty (the
   reorder buffer, attempts, dead ids and their entries, the parked entry, skipped ranges, what is
   owed). So a group in its steady state (no failure, no gap) carries the keys, about 70 bytes of
   keys and numbers, and ``{"f":3}``: under 900 bytes besides its state. An item written in format 1
   or 2 (ids as plain strings in the bookkeeping) is read as written, its ids turned into keys.
4. **Size.** :meth:`StateStore.item_size` counts the item as DynamoDB does (the UTF-8 bytes of every
   attribute name and string, a binary's bytes; a number is 1 byte per two digits, plus 1). Give it
   to ``apply_batch`` as ``size_of`` so a transition that would outgrow the item dies instead of
   being applied;
   ``put_request`` refuses an item over 400 KB with :class:`StateTooLargeError` all the same.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from constructs_fifo.runtime.aws_limits import DYNAMODB_MAX_BATCH_GET_KEYS
from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.constants import (
    GROUP_ATTR_GROUP,
    GROUP_ATTR_SK,
    MAX_ITEM_BYTES,
    RUN_SK,
    SK_PARK,
    STATE_ATTR_BOOK,
    STATE_ATTR_IDS,
    STATE_ATTR_RUN,
    STATE_ATTR_STATE,
    STATE_ATTR_UPDATED_AT,
    STATE_ATTR_VERSION,
    STATE_SK,
)
from constructs_fifo.runtime.dead_jobs.parking import ParkHeader, decode_header
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.exceptions import ConstructsFifoRuntimeError, StateTooLargeError
from constructs_fifo.runtime.state.core.records import GroupState
from constructs_fifo.runtime.state.storage.book import (
    decode_book,
    decode_steering,
    encode_book,
    encode_ids,
    encode_steering,
)
from constructs_fifo.runtime.state.storage.runs import (
    FoundRun,
    RunItem,
    RunMarker,
    decode_run_item,
    run_item_put,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = [
    "StateStore",
    "decode_item",
    "decode_marker",
    "encode_item",
    "item_size",
]

# One condition per rule; ``group`` is a DynamoDB reserved word, so names go through placeholders.
_FIRST_WRITE = "attribute_not_exists(#group)"
_NEXT_WRITE = "#version = :expected"


class StateStore:
    """Reads and commits group states in the group table; see the module docstring for the rules.

    Parameters
    ----------
    table_name : str
        The group table (partition key ``group``, sort key ``sk``, both strings).
    client : DynamoDBClient
        A boto3 DynamoDB client (injected; tests pass a moto-backed one).
    clock : Callable[[], float]
        Epoch seconds, for ``updated_at`` (default :func:`time.time`).
    sleep : Callable[[float], None]
        Waits between retries of unprocessed keys (default :func:`time.sleep`).
    max_read_retries : int
        Retries of unprocessed keys before :meth:`load` gives up.

    Examples
    --------
    >>> store = StateStore("groups", boto3.client("dynamodb"))  # doctest: +SKIP
    >>> read = store.load(["ws#1"])["ws#1"]  # doctest: +SKIP
    >>> result = apply_batch(read, jobs, apply, now_ms=store.now_ms(), max_attempts=5,  # doctest: +SKIP
    ...                      park_on_dead=False, size_of=store.item_size)
    >>> store.commit("ws#1", result.group_state, read.version)  # doctest: +SKIP
    True
    """

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient,
        *,
        clock: Clock = system_clock,
        sleep: Callable[[float], None] = time.sleep,
        max_read_retries: int = 8,
    ) -> None:
        self.table_name = table_name
        self.client = client
        self._clock = clock
        self._sleep = sleep
        self._max_read_retries = max_read_retries

    def now_ms(self) -> int:
        """Return the store's clock in epoch milliseconds."""
        return epoch_ms(self._clock)

    def load(self, groups: Iterable[str]) -> dict[str, GroupState]:
        """Read the groups' states consistently: one ``BatchGetItem`` per 100 groups.

        Returns
        -------
        dict[str, GroupState]
            One entry per group asked for; version 0 and no state for a group without an item.

        Raises
        ------
        ConstructsFifoRuntimeError
            Keys were still unprocessed after ``max_read_retries`` retries (throttling), or an
            item cannot be decoded.
        """
        states, _, _ = self._read(groups, with_park_headers=False, runs_of=())
        return states

    def load_with_park_headers(
        self, groups: Iterable[str]
    ) -> tuple[dict[str, GroupState], dict[str, ParkHeader]]:
        """Read the groups' states and park headers in the same consistent ``BatchGetItem``.

        Both items of a group live in this table (``sk = "state"`` and ``sk = "park"``), so knowing
        whether a group is parked costs no call of its own: one ``BatchGetItem`` per 50 groups.

        Returns
        -------
        tuple
            The states (as :meth:`load`) and the headers of the groups that have one (as
            :meth:`constructs_fifo.runtime.dead_jobs.parking.ParkStore.headers`).

        Raises
        ------
        ConstructsFifoRuntimeError
            As :meth:`load`.
        """
        states, headers, _ = self.load_for_batch(groups)
        return states, headers

    def load_for_batch(
        self, groups: Iterable[str], *, runs_of: Iterable[str] = ()
    ) -> tuple[dict[str, GroupState], dict[str, ParkHeader], dict[str, FoundRun]]:
        """:meth:`load_with_park_headers`, and what each group's read found of its run.

        ``runs_of`` are the groups whose run items are read too (in the same call): a run item is
        only written, and so only looked for, when a group's records come back.

        Returns
        -------
        tuple
            The states, the headers, and one :class:`FoundRun` per group asked for: the marker in force
            (the run item's when it was written over the state's version, else the state item's own),
            and the run item's token.

        Raises
        ------
        ConstructsFifoRuntimeError
            As :meth:`load`, or a run marker cannot be decoded.
        """
        return self._read(groups, with_park_headers=True, runs_of=runs_of)

    def _read(
        self, groups: Iterable[str], *, with_park_headers: bool, runs_of: Iterable[str]
    ) -> tuple[dict[str, GroupState], dict[str, ParkHeader], dict[str, FoundRun]]:
        wanted = list(dict.fromkeys(groups))
        watched = set(runs_of) & set(wanted)
        states: dict[str, GroupState] = {group: GroupState(group) for group in wanted}
        headers: dict[str, ParkHeader] = {}
        carried: dict[str, RunMarker] = {}
        run_items: dict[str, RunItem] = {}
        sort_keys = (STATE_SK, SK_PARK) if with_park_headers else (STATE_SK,)
        keys = [_key(group, sort_key) for group in wanted for sort_key in sort_keys]
        keys += [_key(group, RUN_SK) for group in wanted if group in watched]
        for item in self._batch_get(keys):
            sort_key = item.get(GROUP_ATTR_SK, {}).get("S")
            group = item.get(GROUP_ATTR_GROUP, {}).get("S", "")
            if sort_key == SK_PARK:
                header = decode_header(item)
                headers[header.group] = header
            elif sort_key == STATE_SK:
                state = decode_item(item)
                states[state.group] = state
                marker = decode_marker(item)
                if marker is not None:
                    carried[state.group] = marker
            elif sort_key == RUN_SK:
                run_items[group] = decode_run_item(item)
        runs: dict[str, FoundRun] = {}
        for group in wanted:
            run_item = run_items.get(group)
            live = run_item is not None and run_item.live_over(states[group].version)
            runs[group] = FoundRun(
                marker=run_item.marker if live and run_item is not None else carried.get(group),
                token=None if run_item is None else run_item.token,
                read=group in watched,
            )
        return states, headers, runs

    def _batch_get(self, keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every item of ``keys`` that exists: consistent ``BatchGetItem`` calls of at most 100 keys each,
        retrying ``UnprocessedKeys`` with backoff (rule 1)."""
        items: list[dict[str, Any]] = []
        for start in range(0, len(keys), DYNAMODB_MAX_BATCH_GET_KEYS):
            chunk = keys[start : start + DYNAMODB_MAX_BATCH_GET_KEYS]
            request: dict[str, Any] = {self.table_name: {"Keys": chunk, "ConsistentRead": True}}
            retries = 0
            while request:
                response = self.client.batch_get_item(RequestItems=request)
                items += [
                    cast("dict[str, Any]", item)
                    for item in response.get("Responses", {}).get(self.table_name, [])
                ]
                unprocessed = cast("dict[str, Any]", response.get("UnprocessedKeys") or {})
                request = unprocessed if unprocessed.get(self.table_name, {}).get("Keys") else {}
                if request:
                    retries += 1
                    if retries > self._max_read_retries:
                        left = len(request[self.table_name]["Keys"])
                        raise ConstructsFifoRuntimeError(
                            f"BatchGetItem on {self.table_name!r} left {left} key(s) unprocessed after "
                            f"{self._max_read_retries} retries (throttled); the batch is retried"
                        )
                    self._sleep(min(1.0, 0.05 * 2 ** (retries - 1)))
        return items

    def item_size(self, group_state: GroupState) -> int:
        """The item's size as DynamoDB counts it (the ``size_of`` of ``apply_batch``)."""
        return item_size(encode_item(group_state, version=group_state.version + 1, now_ms=self.now_ms()))

    def put_request(
        self, group: str, group_state: GroupState, expected_version: int, *, run: RunMarker | None = None
    ) -> dict[str, Any]:
        """The ``PutItem`` parameters that commit ``group_state`` over version ``expected_version``.

        With ``run``, the item carries that run marker; without it, the write removes any.

        Raises
        ------
        StateTooLargeError
            The item would be over 400 KB.
        ValueError
            ``group`` is not ``group_state.group``, or ``expected_version`` is negative.
        """
        if group != group_state.group or expected_version < 0:
            raise ValueError(
                f"put_request for group {group!r} at version {expected_version} got the state of "
                f"{group_state.group!r}; the version must be the one read (0 when no item existed)"
            )
        item = encode_item(group_state, version=expected_version + 1, now_ms=self.now_ms())
        if run is not None:
            item[STATE_ATTR_RUN] = {"S": run.encode()}
        size = item_size(item)
        if size > MAX_ITEM_BYTES:
            state_bytes = len(item.get(STATE_ATTR_STATE, {}).get("S", "").encode("utf-8"))
            raise StateTooLargeError(size, MAX_ITEM_BYTES, f"the state is {state_bytes} bytes of it")
        if expected_version == 0:
            return {
                "TableName": self.table_name,
                "Item": item,
                "ConditionExpression": _FIRST_WRITE,
                "ExpressionAttributeNames": {"#group": GROUP_ATTR_GROUP},
            }
        return {
            "TableName": self.table_name,
            "Item": item,
            "ConditionExpression": _NEXT_WRITE,
            "ExpressionAttributeNames": {"#version": STATE_ATTR_VERSION},
            "ExpressionAttributeValues": {":expected": {"N": str(expected_version)}},
        }

    def commit(
        self,
        group: str,
        group_state: GroupState,
        expected_version: int,
        *,
        with_items: Sequence[Mapping[str, Any]] = (),
        run: RunMarker | None = None,
    ) -> bool:
        """Write ``group_state`` as version ``expected_version + 1`` with one conditional write.

        Parameters
        ----------
        with_items : sequence of dict, optional
            Other ``TransactWriteItems`` items to write with the state, all or nothing (a parked
            group's header and kept records). Without them the write is one ``PutItem``; with them,
            one ``TransactWriteItems`` whose first item is the state's ``Put``.
        run : RunMarker, optional
            The run marker the item keeps (:mod:`~constructs_fifo.runtime.state.crash_watch`); none by
            default.

        Returns
        -------
        bool
            ``False`` when the race was lost (the item is no longer at ``expected_version``, or a
            condition of ``with_items`` failed): nothing was written.
        """
        put = self.put_request(group, group_state, expected_version, run=run)
        if not with_items:
            try:
                self.client.put_item(**put)
            except self.client.exceptions.ConditionalCheckFailedException:
                return False
            return True
        try:
            items = [{"Put": put}, *with_items]
            self.client.transact_write_items(TransactItems=items)  # type: ignore[arg-type]
        except self.client.exceptions.TransactionCanceledException:
            return False
        return True

    def mark_run(
        self, group: str, of_version: int, marker: RunMarker, *, replaces: str | None, read: bool
    ) -> str | None:
        """Write the group's run item: ``marker`` over state version ``of_version`` (one ``PutItem``
        of about 100 bytes; :mod:`~constructs_fifo.runtime.state.storage.runs`).

        Conditioned on the item's token still being ``replaces`` (``None``: no item), or, when the
        worker did not read the item (``read`` ``False``), on there being none over ``of_version`` or a
        later version. The state item is not touched.

        Returns
        -------
        str or None
            The token written; ``None`` when the condition failed (another worker marked the group
            since it was read): nothing was written.
        """
        put, token = run_item_put(
            self.table_name, group, of_version, marker, replaces=replaces, read=read, now_ms=self.now_ms()
        )
        try:
            self.client.put_item(**put)
        except self.client.exceptions.ConditionalCheckFailedException:
            return None
        return token


def encode_item(group_state: GroupState, *, version: int, now_ms: int) -> dict[str, Any]:
    """The low-level item of ``group_state`` written as ``version``."""
    item: dict[str, Any] = {
        GROUP_ATTR_GROUP: {"S": group_state.group},
        GROUP_ATTR_SK: {"S": STATE_SK},
        STATE_ATTR_BOOK: {"S": encode_book(group_state.book)},
        STATE_ATTR_VERSION: {"N": str(version)},
        STATE_ATTR_UPDATED_AT: {"N": str(now_ms)},
    }
    if group_state.book.applied:
        item[STATE_ATTR_IDS] = {"B": encode_ids(group_state.book.applied)}
    if group_state.state is not None:
        text = json.dumps(group_state.state, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        item[STATE_ATTR_STATE] = {"S": text}
    item.update(encode_steering(group_state))
    return item


def decode_item(item: dict[str, Any]) -> GroupState:
    """The :class:`GroupState` of a low-level item.

    Raises
    ------
    ConstructsFifoRuntimeError
        The item is not a state item this runtime can read (the message says what is wrong).
    """
    try:
        group = item[GROUP_ATTR_GROUP]["S"]
        state_text = item.get(STATE_ATTR_STATE, {}).get("S")
        state = None if state_text is None else json.loads(state_text)
        book = decode_book(
            item.get(STATE_ATTR_BOOK, {}).get("S", "{}"), ids=_binary(item.get(STATE_ATTR_IDS, {}).get("B"))
        )
        version = int(item[STATE_ATTR_VERSION]["N"])
        cancelled, newest = decode_steering(item)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        shown = item.get(GROUP_ATTR_GROUP, {}).get("S", "?")
        raise ConstructsFifoRuntimeError(
            f"the state item of group {shown!r} cannot be read ({describe(exc)}); it must hold "
            f"{GROUP_ATTR_GROUP}, {STATE_ATTR_VERSION} and a JSON {STATE_ATTR_BOOK} written by this runtime"
        ) from exc
    if state is not None and not isinstance(state, dict):
        raise ConstructsFifoRuntimeError(f"the state of group {group!r} is a JSON {type(state).__name__}")
    return GroupState(group, state, version, book, cancelled, newest)


def decode_marker(item: dict[str, Any]) -> RunMarker | None:
    """The run marker of a low-level state item, ``None`` when it has none.

    Raises
    ------
    ConstructsFifoRuntimeError
        The marker is not one this runtime wrote.
    """
    text = item.get(STATE_ATTR_RUN, {}).get("S")
    if text is None:
        return None
    try:
        return RunMarker.decode(text)
    except (TypeError, ValueError) as exc:
        shown = item.get(GROUP_ATTR_GROUP, {}).get("S", "?")
        raise ConstructsFifoRuntimeError(
            f"the run marker of group {shown!r} cannot be read ({exc}); remove the item's "
            f"{STATE_ATTR_RUN!r} attribute (the group then runs as if no crash happened)"
        ) from exc


def item_size(item: dict[str, Any]) -> int:
    """The size DynamoDB counts for a low-level item of S, N and B attributes.

    Every attribute name's and string's UTF-8 bytes, a binary's bytes; a number
    ``(significant digits + 1) // 2 + 1`` (DynamoDB: about one byte per two significant digits, plus one).
    """
    total = 0
    for name, value in item.items():
        total += len(name.encode("utf-8"))
        if "S" in value:
            total += len(str(value["S"]).encode("utf-8"))
        elif "B" in value:
            total += len(_binary(value["B"]))
        elif "N" in value:
            digits = str(value["N"]).lstrip("-").replace(".", "").strip("0") or "0"
            total += (len(digits) + 1) // 2 + 1
    return total


def _key(group: str, sort_key: str = STATE_SK) -> dict[str, Any]:
    return {GROUP_ATTR_GROUP: {"S": group}, GROUP_ATTR_SK: {"S": sort_key}}


def _binary(value: object) -> bytes:
    """A Binary attribute's bytes (boto3 gives ``bytes``; a JSON client gives base64 text)."""
    if value is None:
        return b""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    return base64.b64decode(str(value))
