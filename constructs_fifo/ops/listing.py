"""``groups list``: the groups the group table knows, a page at a time as the AWS CLI pages.

One Scan of the group table reads both kinds of item that say something about a group: its park
header (``sk = "park"``, both modes) and, in state mode, its state item (``sk = "state"``); kept
records are filtered out. DynamoDB returns a partition's items together, so a group's items arrive
one after the other and each group makes one row.

Paging follows the AWS CLI's ``--max-items`` and ``--starting-token``: without ``--max-items`` every
group is listed (the CLI's own default: it pages through the service for you); with it, at most that
many rows, and a ``nextToken`` to pass as ``--starting-token`` for the next ones. A page never splits a
group: the token is the key of the page's last item, and DynamoDB's Scan resumes after it
(``ExclusiveStartKey``). A queue with 100,000 groups in state mode has 100,000 state items: listing
them all reads the whole table (one read unit per 4 KB, eventually consistent halved: a few hundred
units for small states) and prints 100,000 lines, so page on a terminal; ``--parked`` and ``--gaps``
still scan the table, but print only what is stuck.

Rows of one page come in the table's scan order (the hash of the group), not sorted: a sorted listing
would have to read every page first. Without ``--max-items`` the rows are sorted by group.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from constructs_fifo.ops.errors import OperationError
from constructs_fifo.ops.groups import kept_count
from constructs_fifo.ops.plan import command
from constructs_fifo.ops.state_edits import skip_gap_range
from constructs_fifo.ops.target import STATE_MODE
from constructs_fifo.runtime.constants import GROUP_ATTR_GROUP, GROUP_ATTR_SK, SK_PARK, STATE_SK
from constructs_fifo.runtime.dead_jobs.parking import decode_header
from constructs_fifo.runtime.state.storage.store import decode_item

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.ops.target import OpsQueue
    from constructs_fifo.runtime.dead_jobs.parking import ParkHeader
    from constructs_fifo.runtime.state.core.records import GroupState

__all__ = ["GroupPage", "GroupRow", "group_rows", "list_groups"]


@dataclass(frozen=True)
class GroupRow:
    """One line of ``groups list``."""

    group: str
    status: str  # PARKED, HELD, RESUMING, GAP or LIVE
    dead_job_id: str | None = None
    reason: str | None = None
    kept: int = 0
    version: int | None = None
    last_seq: int | None = None
    buffered: int = 0
    gap_open_since_ms: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "status": self.status,
            "deadJobId": self.dead_job_id,
            "reason": self.reason,
            "kept": self.kept,
            "version": self.version,
            "lastSeq": self.last_seq,
            "buffered": self.buffered,
            "gapOpenSinceMs": self.gap_open_since_ms,
        }


@dataclass
class GroupPage:
    """The rows of one ``groups list`` and, when more groups follow, the token for the next page."""

    queue: str
    rows: list[GroupRow] = field(default_factory=list)
    next_token: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "groups": [row.to_dict() for row in self.rows],
            "nextToken": self.next_token,
        }


def _encode_token(key: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(key, sort_keys=True).encode()).decode()


def _decode_token(token: str) -> dict[str, Any]:
    """The ``ExclusiveStartKey`` of a token this module printed; an :class:`OperationError` otherwise."""
    try:
        key = json.loads(base64.urlsafe_b64decode(token.encode()))
        if isinstance(key, dict) and {GROUP_ATTR_GROUP, GROUP_ATTR_SK} == set(key):
            return {name: {"S": str(value["S"])} for name, value in key.items()}
    except (ValueError, binascii.Error, TypeError, KeyError):
        pass
    raise OperationError(
        f"--starting-token {token!r} is not a token `groups list` printed (it encodes the group table "
        "key to resume after)",
        "pass the nextToken the previous listing printed as it printed it, or start at the first group: "
        f"{command('groups', 'list', '--max-items', '50')}",
    )


def _items(ops: OpsQueue, kinds: list[str], start: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
    """The group table's items of the sort keys ``kinds``, in scan order, from after ``start``."""
    table = ops.deployed.group_table
    if not table:
        return
    values = {f":k{i}": {"S": kind} for i, kind in enumerate(kinds)}
    params: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": f"#sk IN ({', '.join(values)})",
        "ExpressionAttributeNames": {"#sk": GROUP_ATTR_SK},
        "ExpressionAttributeValues": values,
        "ConsistentRead": True,
    }
    if start is not None:
        params["ExclusiveStartKey"] = start
    while True:
        response = ops.dynamodb.scan(**params)
        yield from cast("list[dict[str, Any]]", response.get("Items", []))
        if "LastEvaluatedKey" not in response:
            return
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _row(ops: OpsQueue, group: str, header: ParkHeader | None, state: GroupState | None) -> GroupRow:
    book = state.book if state is not None else None
    gap = state is not None and skip_gap_range(state) is not None
    return GroupRow(
        group=group,
        status=header.status if header is not None else "GAP" if gap else "LIVE",
        dead_job_id=None if header is None else header.dead_job_id,
        reason=None if header is None else header.dead.reason.value,
        kept=kept_count(ops, group) if header is not None else 0,
        version=None if state is None else state.version,
        last_seq=None if book is None else book.last_seq,
        buffered=0 if book is None else len(book.buffer),
        gap_open_since_ms=None if book is None else book.gap_since_ms,
    )


def list_groups(
    ops: OpsQueue,
    *,
    parked: bool = False,
    gaps: bool = False,
    max_items: int | None = None,
    starting_token: str | None = None,
) -> GroupPage:
    """The groups the tables know: parked or resuming (both modes) and, in state mode, every state item.

    ``parked`` keeps the parked and resuming groups; ``gaps`` the groups waiting on a sequence gap;
    both keep either. ``max_items`` and ``starting_token`` page as the AWS CLI does (module docstring).

    Raises
    ------
    OperationError
        ``starting_token`` is not a token this command printed.
    """
    start = None if starting_token is None else _decode_token(starting_token)
    state_mode = ops.mode == STATE_MODE
    # Park headers always (a parked group with a gap is PARKED under --gaps too); state items always in
    # state mode: a parked group's row shows its last seq and buffered jobs too (a Scan reads every item
    # of the table whatever its filter keeps, so reading them costs nothing more).
    kinds = [SK_PARK] + ([STATE_SK] if state_mode else [])
    page = GroupPage(ops.label)
    current: str | None = None
    header: ParkHeader | None = None
    state: GroupState | None = None
    last_key: dict[str, Any] | None = None

    def flush() -> None:
        if current is None:
            return
        stuck = (parked and header is not None) or (
            gaps and state is not None and skip_gap_range(state) is not None
        )
        if stuck or not (parked or gaps):
            page.rows.append(_row(ops, current, header, state))

    for item in _items(ops, kinds, start):
        group = item[GROUP_ATTR_GROUP]["S"]
        if group != current:
            flush()
            if max_items is not None and last_key is not None and len(page.rows) >= max_items:
                page.next_token = _encode_token(last_key)
                return page
            current, header, state = group, None, None
        if item[GROUP_ATTR_SK]["S"] == SK_PARK:
            header = decode_header(item)
        else:
            state = decode_item(item)
        last_key = {GROUP_ATTR_GROUP: item[GROUP_ATTR_GROUP], GROUP_ATTR_SK: item[GROUP_ATTR_SK]}
    flush()
    if max_items is None and starting_token is None:
        page.rows.sort(key=lambda row: row.group)
    return page


def group_rows(ops: OpsQueue, *, parked: bool = False, gaps: bool = False) -> list[GroupRow]:
    """Every row of ``groups list`` (no paging), sorted by group: what ``status`` counts."""
    return list_groups(ops, parked=parked, gaps=gaps).rows
