"""Parked groups: a group stopped at its dead job, its later jobs kept in order outside the queue.

Where kept jobs live, and why there
-----------------------------------
In the **group table** (partition key ``group``, sort key ``sk``): one park header per parked group
at ``sk = "park"`` and one item per kept record at ``sk = "kept#<20-digit sequence>"``, so a Query on
the group returns the kept records in the order they were kept. Not in SQS: a FIFO queue cannot hand
out one group's messages selectively, a message sent back to the source queue goes behind newer ones,
and ``StartMessageMoveTask`` moves a whole dead-letter queue. Not in the dead-letter queue for the
same reasons. Kept records do not burn receive counts and cannot be dead-lettered by SQS.

The rules
---------
1. **One read per batch.** The runtime reads the park headers of every group in a batch with one
   consistent ``BatchGetItem``; a group without a header is not parked (the happy path). The header
   is the one answer to "is this group parked, and at what", in both modes and for every reader
   (``ParkedGroups``, ``GroupStateReader``): it exists while the group is ``PARKED`` or ``RESUMING``,
   and names the message it stopped at (``dead.message_id``, always set) and that message's
   ``jobId`` (empty for a body without a usable one). A state-mode group's state item records
   only deaths of jobs that ran (a malformed record parks its group in the header alone, and a
   group whose first message was malformed has no state item at all).
2. **Park.** When a job of group G dies under the PARK policy, one ``TransactWriteItems`` puts G's
   header (``PARKED``, with the dead job's triage fields) on condition that none exists, and keeps the
   dead record and every later record of G in the batch. Then the records are deleted from the queue.
3. **Keep.** Every record of a group that has a header is appended to its kept records (one
   transaction: the puts and the header's ``next_seq``/``version`` on condition of the version read in
   rule 1) instead of running. Everything kept precedes everything still in the queue, because a
   group's records are kept in the order SQS delivers them. **Once per message:** the header remembers
   the ``messageId`` of the group's last ``KEPT_RECENT_MESSAGE_IDS`` kept records, and a record
   whose message is among them is not kept again (its batch's delete was refused, or a stale worker
   kept it: SQS delivered the same message twice). Without this, a malformed record, which has no
   job id to recognise it by, was kept once per delivery and an operator skipped it once per copy
   (found by the chaos suite: five malformed records, refused deletes, 100 resumes).
4. **Resume.** An operator (:class:`constructs_fifo.client.ParkedGroups`) sets the header to
   ``RESUMING`` (after resetting the dead job's claim, or after sending the dead job to the
   dead-letter queue when it is skipped) and sends a wake-up message in group G. Whenever the runtime
   sees a ``RESUMING`` group, it first keeps the batch's records of G (rule 3), then replays the kept
   records from the head, in order, with the ordinary claim rules, deleting each page it finished
   with the header update in one transaction. When none are left it deletes the header: the group is
   live again, and what arrives next runs normally. A kept job that fails transiently sets
   ``retry_at_ms`` (the backoff) and the wake-up message comes back after it; one that dies parks the
   group again at that job.
5. **Hold.** An operator (:class:`constructs_fifo.client.JobSteering`) holds a live group by putting a
   ``HELD`` header (on condition that none exists), or a resuming one by setting its header ``HELD``
   (on condition of its version: the replay's next page write fails and the replay stops). A held group
   is kept as a parked one is (rule 3), without a dead job; releasing it sets ``RESUMING`` and sends
   a wake-up message (rule 4). It reuses the one read of rule 1, so holding costs a queue nothing
   until it is used (claim mode needs the PARK policy for that read; state mode always reads).
6. **Cancel a live group's queued jobs.** An operator puts a ``CANCELLING`` header naming a marker id
   (on condition that none exists), then sends the marker message in the group: FIFO puts it after
   every job sent before and before every job sent after. A runtime meeting the header cancels each
   record of the group (it never runs; state mode: never applied, its place closed) until it meets
   the marker, then deletes the header (on condition of its version); records after the marker come
   back at once (visibility 0) and find the group live (:mod:`constructs_fifo.runtime.steering.group_cancel`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from constructs_fifo.runtime.aws_limits import DYNAMODB_MAX_BATCH_GET_KEYS
from constructs_fifo.runtime.clock import Clock, epoch_ms, system_clock
from constructs_fifo.runtime.constants import GROUP_ATTR_GROUP, GROUP_ATTR_SK, SK_KEPT_PREFIX, SK_PARK
from constructs_fifo.runtime.dead_jobs.park_records import (
    CANCELLING,
    HELD,
    PARKED,
    RESUMING,
    KeptRecord,
    ParkHeader,
    cancel_marker_message,
    cancel_marker_of,
    decode_header,
    decode_kept,
    encode_header,
    encode_kept,
    is_wake_up,
    kept_action,
    kept_sort_key,
    recent_after,
    wake_up_message,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.exceptions import ParkConflictError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from constructs_fifo.runtime.types import SQSRecord

# The park items' types and codecs live in park_records; they are re-exported here, where the rules are.
__all__ = [
    "CANCELLING",
    "HELD",
    "KEPT_PAGE_SIZE",
    "PARKED",
    "RESUMING",
    "KeptRecord",
    "ParkHeader",
    "ParkStore",
    "cancel_marker_message",
    "cancel_marker_of",
    "decode_header",
    "is_wake_up",
    "kept_action",
    "kept_sort_key",
    "wake_up_message",
]

#: Kept records replayed per page (one Query, one closing transaction of at most this many deletes).
KEPT_PAGE_SIZE = 25


class ParkStore:
    """Reads and writes parked groups in the group table; see the module docstring for the rules.

    Parameters
    ----------
    table_name : str
        The group table (partition key ``group``, sort key ``sk``, both strings).
    client : DynamoDBClient
        A boto3 DynamoDB client (injected).
    clock : Callable[[], float]
        Epoch seconds (default :func:`time.time`).
    """

    def __init__(self, table_name: str, client: DynamoDBClient, *, clock: Clock = system_clock):
        self.table_name = table_name
        self._client = client
        self._clock = clock

    def now_ms(self) -> int:
        """The store's clock in epoch milliseconds."""
        return epoch_ms(self._clock)

    # --- reads -------------------------------------------------------------------------------------

    def headers(self, groups: Sequence[str]) -> dict[str, ParkHeader]:
        """Rule 1: the headers of ``groups`` that have one, with one consistent BatchGetItem each 100."""
        found: dict[str, ParkHeader] = {}
        unique = list(dict.fromkeys(groups))
        for start in range(0, len(unique), DYNAMODB_MAX_BATCH_GET_KEYS):
            keys: list[dict[str, Any]] = [
                _key(group, SK_PARK) for group in unique[start : start + DYNAMODB_MAX_BATCH_GET_KEYS]
            ]
            while keys:
                response = self._client.batch_get_item(
                    RequestItems={self.table_name: {"Keys": keys, "ConsistentRead": True}}
                )
                for item in response.get("Responses", {}).get(self.table_name, []):
                    header = decode_header(cast("dict[str, Any]", item))
                    found[header.group] = header
                unprocessed: Mapping[str, Any] = response.get("UnprocessedKeys", {}).get(self.table_name, {})
                keys = list(unprocessed.get("Keys", []))
        return found

    def header(self, group: str) -> ParkHeader | None:
        """One group's header (consistent read), or ``None`` when the group is not parked."""
        return self.headers([group]).get(group)

    def kept(self, group: str, *, limit: int = KEPT_PAGE_SIZE, from_seq: int = 0) -> list[KeptRecord]:
        """The first ``limit`` kept records of ``group`` from ``from_seq`` on, oldest first (one
        consistent Query)."""
        condition = "#group = :group AND begins_with(#sk, :kept)"
        values = {":group": {"S": group}, ":kept": {"S": SK_KEPT_PREFIX}}
        if from_seq > 0:
            condition = "#group = :group AND #sk BETWEEN :kept AND :last"  # not the park/state items
            values[":kept"] = {"S": kept_sort_key(from_seq)}
            values[":last"] = {"S": kept_sort_key(10**20 - 1)}
        response = self._client.query(
            TableName=self.table_name,
            KeyConditionExpression=condition,
            ExpressionAttributeNames={"#group": GROUP_ATTR_GROUP, "#sk": GROUP_ATTR_SK},
            ExpressionAttributeValues=values,
            ConsistentRead=True,
            Limit=limit,
        )
        return [decode_kept(cast("dict[str, Any]", item)) for item in response.get("Items", [])]

    def parked(self) -> list[ParkHeader]:
        """Every header in the table (a Scan: for operators, not for the runtime's hot path)."""
        headers: list[ParkHeader] = []
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "FilterExpression": "#sk = :park",
            "ExpressionAttributeNames": {"#sk": GROUP_ATTR_SK},
            "ExpressionAttributeValues": {":park": {"S": SK_PARK}},
            "ConsistentRead": True,
        }
        while True:
            response = self._client.scan(**params)
            headers += [decode_header(cast("dict[str, Any]", item)) for item in response.get("Items", [])]
            if "LastEvaluatedKey" not in response:
                return sorted(headers, key=lambda header: header.group)
            params["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    # --- writes ------------------------------------------------------------------------------------
    # Each write is one transaction. The ``*_items`` methods return its items without writing, so
    # that state mode can put them in the same transaction as its state item.

    def park(self, group: str, records: Sequence[SQSRecord], *, dead: DeadJob) -> ParkHeader:
        """Rule 2: park ``group`` at ``records[0]`` (its dead job) and keep ``records`` in order.

        Raises
        ------
        ParkConflictError
            The group already has a header (a concurrent worker parked it): nothing was written.
        RecordTooLargeToKeepError
            A record does not fit in a DynamoDB item even compressed: nothing was written.
        """
        header, items = self.park_items(group, records, dead=dead)
        self.transact(items, group)
        return header

    def park_items(
        self, group: str, records: Sequence[SQSRecord], *, dead: DeadJob
    ) -> tuple[ParkHeader, list[dict[str, Any]]]:
        """:meth:`park`'s header and transaction items (the header on condition that none exists)."""
        records = ParkHeader(group, PARKED, 0, 0, dead).new_records(records)
        header = ParkHeader(
            group=group,
            status=PARKED,
            version=1,
            next_seq=len(records),
            dead=dead,
            recent_message_ids=recent_after((), records),
        )
        puts = [self._put_kept(KeptRecord(group, seq, record)) for seq, record in enumerate(records)]
        return header, [self._put_header(header, expected_version=None), *puts]

    def hold_items(self, group: str, *, hold: DeadJob) -> tuple[ParkHeader, list[dict[str, Any]]]:
        """Rule 5's header: ``HELD``, recording ``hold``, on condition that the group has none."""
        header = ParkHeader(group=group, status=HELD, version=1, next_seq=0, dead=hold)
        return header, [self._put_header(header, expected_version=None)]

    def cancelling_items(self, group: str, *, cancel: DeadJob) -> tuple[ParkHeader, list[dict[str, Any]]]:
        """Rule 6's header: ``CANCELLING``, recording ``cancel`` (its marker id as ``message_id``), on
        condition that the group has none."""
        header = ParkHeader(group=group, status=CANCELLING, version=1, next_seq=0, dead=cancel)
        return header, [self._put_header(header, expected_version=None)]

    def keep(self, header: ParkHeader, records: Sequence[SQSRecord]) -> ParkHeader:
        """Rule 3: append ``records`` to the kept records of a group that has ``header``.

        A record whose message the group kept already is left out; when none is left nothing is
        written and ``header`` comes back as it was.

        Raises
        ------
        ParkConflictError
            The header changed since it was read: nothing was written.
        RecordTooLargeToKeepError
            A record does not fit in a DynamoDB item even compressed: nothing was written.
        """
        records = header.new_records(records)
        if not records:
            return header
        updated, items = self.keep_items(header, records)
        self.transact(items, header.group)
        return updated

    def keep_items(
        self, header: ParkHeader, records: Sequence[SQSRecord]
    ) -> tuple[ParkHeader, list[dict[str, Any]]]:
        """:meth:`keep`'s new header and transaction items (on condition of ``header.version``).

        Every record of ``records`` is kept: leave out those the group kept already with
        :meth:`ParkHeader.new_records` first (:meth:`keep` does).
        """
        updated = replace(
            header,
            version=header.version + 1,
            next_seq=header.next_seq + len(records),
            recent_message_ids=recent_after(header.recent_message_ids, records),
        )
        puts = [
            self._put_kept(KeptRecord(header.group, header.next_seq + offset, record))
            for offset, record in enumerate(records)
        ]
        return updated, [self._put_header(updated, expected_version=header.version), *puts]

    def advance(
        self,
        header: ParkHeader,
        *,
        done: Sequence[KeptRecord],
        status: str | None = None,
        retry_at_ms: int | None = None,
        dead: DeadJob | None = None,
        skip_dead: bool | None = None,
    ) -> ParkHeader:
        """Delete the replayed records ``done`` and update the header, in one transaction.

        ``None`` leaves a field as it is, except ``skip_dead``, which a new ``status`` resets to
        ``False`` (a decision belongs to one resume).

        Raises
        ------
        ParkConflictError
            The header changed since it was read: nothing was written.
        """
        updated, items = self.advance_items(
            header, done=done, status=status, retry_at_ms=retry_at_ms, dead=dead, skip_dead=skip_dead
        )
        self.transact(items, header.group)
        return updated

    def advance_items(
        self,
        header: ParkHeader,
        *,
        done: Sequence[KeptRecord],
        status: str | None = None,
        retry_at_ms: int | None = None,
        dead: DeadJob | None = None,
        skip_dead: bool | None = None,
    ) -> tuple[ParkHeader, list[dict[str, Any]]]:
        """:meth:`advance`'s new header and transaction items (on condition of ``header.version``)."""
        if skip_dead is None:
            skip_dead = header.skip_dead if status is None or status == header.status else False
        updated = replace(
            header,
            version=header.version + 1,
            status=status or header.status,
            retry_at_ms=header.retry_at_ms if retry_at_ms is None else retry_at_ms,
            dead=header.dead if dead is None else dead,
            skip_dead=skip_dead,
        )
        return updated, [self._put_header(updated, expected_version=header.version), *self._deletes(done)]

    def finish(self, header: ParkHeader, *, done: Sequence[KeptRecord] = ()) -> None:
        """Delete the replayed records ``done`` and the header: the group is live again.

        Raises
        ------
        ParkConflictError
            The header changed since it was read: nothing was written.
        """
        self.transact(self.finish_items(header, done=done), header.group)

    def finish_items(self, header: ParkHeader, *, done: Sequence[KeptRecord] = ()) -> list[dict[str, Any]]:
        """:meth:`finish`'s transaction items (the header's delete on condition of its version)."""
        header_delete: dict[str, Any] = {
            "Delete": {
                "TableName": self.table_name,
                "Key": _key(header.group, SK_PARK),
                **_version_condition(header.version),
            }
        }
        return [header_delete, *self._deletes(done)]

    def transact(self, items: Sequence[Mapping[str, Any]], group: str) -> None:
        """Write ``items`` in one ``TransactWriteItems``.

        Raises
        ------
        ParkConflictError
            A condition failed (another worker or an operator wrote first): nothing was written.
        """
        try:
            self._client.transact_write_items(TransactItems=list(items))  # type: ignore[arg-type]
        except self._client.exceptions.TransactionCanceledException as exc:
            raise ParkConflictError(
                f"group {group!r}: its park header changed while this worker wrote it (another worker or "
                "an operator got there first); nothing was written, and the records are retried"
            ) from exc

    # --- helpers ---------------------------------------------------------------------------------

    def _deletes(self, done: Sequence[KeptRecord]) -> list[dict[str, Any]]:
        return [
            {"Delete": {"TableName": self.table_name, "Key": _key(record.group, record.sort_key)}}
            for record in done
        ]

    def _put_header(self, header: ParkHeader, *, expected_version: int | None) -> dict[str, Any]:
        item = encode_header(header, updated_at_ms=self.now_ms())
        condition: dict[str, Any] = (
            {
                "ConditionExpression": "attribute_not_exists(#sk)",
                "ExpressionAttributeNames": {"#sk": GROUP_ATTR_SK},
            }
            if expected_version is None
            else _version_condition(expected_version)
        )
        return {"Put": {"TableName": self.table_name, "Item": item, **condition}}

    def _put_kept(self, kept: KeptRecord) -> dict[str, Any]:
        return {"Put": {"TableName": self.table_name, "Item": encode_kept(kept, kept_at_ms=self.now_ms())}}


def _key(group: str, sort_key: str) -> dict[str, Any]:
    return {GROUP_ATTR_GROUP: {"S": group}, GROUP_ATTR_SK: {"S": sort_key}}


def _version_condition(version: int) -> dict[str, Any]:
    return {
        "ConditionExpression": "#version = :version",
        "ExpressionAttributeNames": {"#version": "version"},
        "ExpressionAttributeValues": {":version": {"N": str(version)}},
    }
