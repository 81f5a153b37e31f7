"""A pace key's bucket in DynamoDB: one item per key value, taken with one conditional ``UpdateItem``.

The I/O of :mod:`.pace` (its module docstring states the algorithm and what it promises). The bucket is
an item of the table the mode already writes (claim mode: the claim table, ``id = pace#<key>``; state
mode: the group table, ``group = pace#<key>``, ``sk = pace``) holding ``tat`` (epoch ms). Rules:

1. **One write per take.** ``tat`` only grows (every form of the write moves it forward), so the
   ``tat`` this process saw last is a lower bound of the stored one. The store guesses the bucket's
   form from it and writes once: an idle bucket (``tat <= now``, or none) with ``SET tat = :new`` on
   ``attribute_not_exists(tat) OR tat <= :now``; a busy one with ``SET tat = tat + :k×I`` on
   ``tat > :now AND tat <= :now + tau - (k - 1)×I``. Either condition makes the take conform to the
   limit whatever the guess. A wrong guess fails its condition, whose ``ALL_OLD`` returns the stored
   ``tat`` at no extra cost; the store plans again from it (a second write; at most three).
2. **Paced without a write.** When the lower bound already says no token is free, the bucket is not
   written: the real one has fewer. A process that never saw the key writes once to learn it.
3. **A take is spent.** A token taken for a run that then crashes, or for a copy that turns out to be
   a duplicate, is not given back: conservative (the key runs slower, never faster).
4. **Items expire** (claim table's TTL) an hour after their ``tat``, when an absent bucket and a full
   one are the same; the group table has no TTL: one small item per key value stays.
5. **Changed without a deploy.** The queue's override item (``id`` / ``group`` = ``pace-limit``), written by
   :func:`write_override` (``JobSteering.set_pace``), replaces the construct's ``jobs``, ``period`` and
   ``burst`` (never its key). A process reads it at most once a minute (one eventually consistent
   ``GetItem``), so a change takes effect within a minute and a second; the buckets' ``tat`` carry over.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, cast

from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.constants import ATTR_EXPIRATION, ATTR_ID, GROUP_ATTR_GROUP, GROUP_ATTR_SK
from constructs_fifo.runtime.steering.pace import PaceGrant, PaceLimit, grant

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = [
    "ATTR_TAT",
    "OVERRIDE_REFRESH_MS",
    "PACE_BUCKET_PREFIX",
    "PACE_OVERRIDE_ID",
    "PACE_SK",
    "PaceStore",
    "claim_table_key",
    "group_table_key",
    "open_pace",
    "read_override",
    "write_override",
]

#: The bucket's id (claim table) or group (group table): this prefix + the key's value.
PACE_BUCKET_PREFIX: Final = "pace#"
#: The bucket's sort key in the group table.
PACE_SK: Final = "pace"
#: The bucket's theoretical arrival time, epoch milliseconds.
ATTR_TAT: Final = "tat"
#: A bucket item expires this long after its ``tat`` (it is full, the same as absent, by then).
_LINGER_SECONDS: Final = 3600
#: Writes one take may make (a guess, then plans from what the lost conditions returned).
_MAX_WRITES: Final = 3
#: Key values whose last ``tat`` a process remembers (the oldest forgotten first).
_REMEMBERED_KEYS: Final = 4096

_IDLE_CONDITION: Final = "attribute_not_exists(#tat) OR #tat <= :now"
_IDLE_UPDATE: Final = "SET #tat = :tat, #exp = :exp"
_BUSY_CONDITION: Final = "#tat > :now AND #tat <= :last"
_BUSY_UPDATE: Final = "SET #tat = #tat + :step, #exp = :exp"


#: The queue's override item's id (claim table) or group (group table): no bucket's (those have a ``#``).
PACE_OVERRIDE_ID: Final = "pace-limit"
#: How often a process reads the override item, at most.
OVERRIDE_REFRESH_MS: Final = 60_000
_OVERRIDE_NUMBERS: Final = ("jobs", "period_seconds", "burst")


def claim_table_key(item_id: str) -> dict[str, Any]:
    """A pace item's key in the claim table (``item_id``: ``pace#<value>`` or :data:`PACE_OVERRIDE_ID`)."""
    return {ATTR_ID: {"S": item_id}}


def group_table_key(item_id: str) -> dict[str, Any]:
    """A pace item's key in the group table."""
    return {GROUP_ATTR_GROUP: {"S": item_id}, GROUP_ATTR_SK: {"S": PACE_SK}}


def write_override(
    client: DynamoDBClient,
    table_name: str,
    item_key: Callable[[str], dict[str, Any]],
    limit: PaceLimit | None,
    *,
    by: str,
    now_ms: int,
) -> None:
    """Rule 5: write the queue's override (``None``: clear it; the construct's limit applies again)."""
    numbers = {} if limit is None else {name: getattr(limit, name) for name in _OVERRIDE_NUMBERS}
    item = {
        **item_key(PACE_OVERRIDE_ID),
        **{name: {"N": str(value)} for name, value in numbers.items()},
        "updated_at": {"N": str(now_ms)},
        "updated_by": {"S": by or "-"},
    }
    client.put_item(TableName=table_name, Item=item)


def read_override(
    client: DynamoDBClient, table_name: str, item_key: Callable[[str], dict[str, Any]], *, consistent: bool
) -> dict[str, Any] | None:
    """Rule 5: the override's numbers, ``updated_at`` and ``updated_by`` (``None``: no override)."""
    response = client.get_item(
        TableName=table_name, Key=item_key(PACE_OVERRIDE_ID), ConsistentRead=consistent
    )
    item = cast("dict[str, Any]", response.get("Item") or {})
    if not all(name in item for name in _OVERRIDE_NUMBERS):
        return None
    found: dict[str, Any] = {name: int(item[name]["N"]) for name in _OVERRIDE_NUMBERS}
    found["updated_at"] = int(item["updated_at"]["N"]) if "updated_at" in item else None
    found["updated_by"] = item.get("updated_by", {}).get("S")
    return found


class PaceStore:
    """Takes tokens from a key's bucket; see the module docstring for the rules.

    Parameters
    ----------
    table_name : str
        The claim table (claim mode) or the group table (state mode).
    client : DynamoDBClient
        The runtime's client.
    limit : PaceLimit
        The limit (the construct's ``pace``).
    item_key : Callable[[str], dict]
        The bucket's key for a key value (:func:`claim_table_key`, :func:`group_table_key`).
    clock : Clock
        Epoch seconds (tests inject one).
    """

    def __init__(
        self,
        table_name: str,
        client: DynamoDBClient,
        *,
        limit: PaceLimit,
        item_key: Callable[[str], dict[str, Any]],
        clock: Clock = system_clock,
    ) -> None:
        self.table_name = table_name
        self.base = limit
        self.limit = limit
        self._read_at_ms: int | None = None
        self._client = client
        self._item_key = item_key
        self._clock = clock
        self._seen: OrderedDict[str, int] = OrderedDict()

    def now_ms(self) -> int:
        """The store's clock, epoch milliseconds."""
        return epoch_ms(self._clock)

    def take(self, key: str, want: int = 1) -> PaceGrant:
        """Take up to ``want`` tokens of ``key`` now: the grant says how many, and when the next is due."""
        now = self.now_ms()
        self._refresh(now)
        tat = self._seen.get(key)
        for _ in range(_MAX_WRITES):
            plan = grant(self.limit, tat, now, want)
            if plan.granted == 0:  # rule 2: ``tat`` is a lower bound, the bucket has no more
                return plan
            written, stored = self._write(key, tat, now, plan.granted)
            if written is not None:
                self._remember(key, written)
                due = now if plan.granted == want else max(now, written - self.limit.tolerance_ms)
                return PaceGrant(granted=plan.granted, tat_ms=written, due_ms=due)
            tat = stored
            if tat is not None:
                self._remember(key, tat)
        return PaceGrant(granted=0, tat_ms=None, due_ms=now + self.limit.interval_ms)  # lost thrice

    def _write(self, key: str, tat: int | None, now: int, k: int) -> tuple[int | None, int | None]:
        """One conditional write of ``k`` tokens, its form guessed from ``tat``: (the new ``tat``, or
        ``None`` and the stored ``tat`` the lost condition returned)."""
        step = k * self.limit.interval_ms
        if tat is None or tat <= now:
            condition, update = _IDLE_CONDITION, _IDLE_UPDATE
            values = {":now": now, ":tat": now + step, ":exp": (now + step) // 1000 + _LINGER_SECONDS}
        else:
            last = now + self.limit.tolerance_ms - (k - 1) * self.limit.interval_ms
            condition, update = _BUSY_CONDITION, _BUSY_UPDATE
            values = {
                ":now": now,
                ":last": last,
                ":step": step,
                ":exp": (last + step) // 1000 + _LINGER_SECONDS,
            }
        try:
            response = self._client.update_item(
                TableName=self.table_name,
                Key=self._item_key(f"{PACE_BUCKET_PREFIX}{key}"),
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#tat": ATTR_TAT, "#exp": ATTR_EXPIRATION},
                ExpressionAttributeValues={name: {"N": str(value)} for name, value in values.items()},
                ReturnValues="UPDATED_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            item = cast("dict[str, Any]", exc.response.get("Item") or {})
            return None, int(item[ATTR_TAT]["N"]) if ATTR_TAT in item else None
        attributes = cast("dict[str, Any]", response.get("Attributes") or {})
        return int(attributes[ATTR_TAT]["N"]), None

    def _refresh(self, now: int) -> None:
        """Rule 5: the limit, the override's numbers over the construct's, read at most once a minute."""
        if self._read_at_ms is not None and now - self._read_at_ms < OVERRIDE_REFRESH_MS:
            return
        found = read_override(self._client, self.table_name, self._item_key, consistent=False)
        self._read_at_ms = now
        override = None
        if found is not None:
            numbers = {name: found[name] for name in _OVERRIDE_NUMBERS}
            override = PaceLimit(**numbers, key=self.base.key)
        self.limit = override if override is not None and not override.problems() else self.base

    def _remember(self, key: str, tat: int) -> None:
        self._seen[key] = max(tat, self._seen.get(key, tat))
        self._seen.move_to_end(key)
        while len(self._seen) > _REMEMBERED_KEYS:
            self._seen.popitem(last=False)


def open_pace(
    text: str | None, table_name: str, client: DynamoDBClient, item_key: Callable[[str], dict[str, Any]]
) -> PaceStore | None:
    """The store of the pace limit written as ``text`` (the ``pace`` setting) on ``table_name``;
    ``None`` without one: the queue is not paced, and nothing is read or written for it."""
    if not text:
        return None
    return PaceStore(table_name, client, limit=PaceLimit.from_env(text), item_key=item_key)
