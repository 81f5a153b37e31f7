"""Read a group's state from an ``OrderedAgentQueue``'s group table without knowing the item layout.

Other services (a dashboard, a verifier, an API) read what state mode committed: the user's state,
its version, and whether the group waits on a sequence gap or is parked. ``get`` and ``version``
make one ``GetItem`` (the state item); ``snapshot`` two (the state item and the group's park
header). The layout is decoded by the runtime's own codecs
(:mod:`constructs_fifo.runtime.state.storage.store`,
:mod:`constructs_fifo.runtime.dead_jobs.parking`), so the two cannot drift apart. The reader needs
``dynamodb:GetItem`` on the table (the construct's ``grant_read_state``).

Parked or not is read from the park header, as the runtime and ``ParkedGroups`` read it: the one
answer for every reader (a group parked at a malformed record, or at its very first message, has no
death in its state item, or no state item at all).

Examples
--------
>>> from constructs_fifo.client.state_reader import GroupStateReader
>>> reader = GroupStateReader("MyStack-WorkspacesGroups1234")  # doctest: +SKIP
>>> reader.get("ws#42")  # doctest: +SKIP
{'patches': ['p1', 'p2'], 'tested_head': 2}
>>> reader.version("ws#42")  # doctest: +SKIP
7
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from botocore.exceptions import ClientError

from constructs_fifo.client.environment import default_client, environment_errors
from constructs_fifo.client.errors import ProducerError
from constructs_fifo.runtime.constants import (
    GROUP_ATTR_GROUP,
    GROUP_ATTR_SK,
    SK_PARK,
    STATE_ATTR_UPDATED_AT,
    STATE_SK,
)
from constructs_fifo.runtime.dead_jobs.parking import ParkHeader, decode_header
from constructs_fifo.runtime.exceptions import ConstructsFifoRuntimeError
from constructs_fifo.runtime.state.core.records import job_key
from constructs_fifo.runtime.state.storage.store import decode_item

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from constructs_fifo.runtime.state.core.records import GroupState

__all__ = ["GroupSnapshot", "GroupStateReader", "JobSighting", "StateReadError", "job_sighting"]

_FIXES = {
    "AccessDeniedException": "grant the caller read access with the queue's grant_read_state(grantee)",
    "ResourceNotFoundException": "check the table name: it is the construct's state_table.table_name",
}


class StateReadError(ProducerError):
    """The group table could not be read, or holds an item this client cannot decode."""


@dataclass(frozen=True, slots=True)
class GroupSnapshot:
    """What the group table holds for one group.

    Attributes
    ----------
    group:
        The ``MessageGroupId``.
    state:
        The user's state, ``None`` when no transition was applied yet (or the group has no item).
    version:
        The item's version: 0 without an item, then one more per write of the item. A batch that
        changed the group writes it once (a redelivered batch too: its run marker goes to a run item
        of its own), and a commit that owed a dead letter one more to clear it. Compare versions for
        "changed since", not to count batches.
    updated_at_ms:
        Epoch ms of the last commit (``None`` without an item).
    last_seq:
        The last ``seq`` applied or given up (``None`` when the group's jobs carry none).
    buffered:
        Jobs waiting in the reorder buffer for a missing ``seq``.
    gap_open_since_ms:
        When the open sequence gap opened (``None`` without a gap).
    parked_job_id:
        The ``jobId`` of the dead job the group is parked at; ``None`` when it is not parked, and
        also when the message it is parked at has no usable ``jobId`` (a malformed body): read
        ``parked`` for whether it is parked.
    parked:
        Whether the group is parked: it has a park header (``park_status`` ``PARKED``, or
        ``RESUMING`` while an operator's resume replays it). Its jobs are kept, not run, meanwhile.
    park_status:
        ``"PARKED"``, ``"RESUMING"`` or ``None`` (not parked).
    parked_message_id:
        The ``messageId`` of the message the group is parked at (``None`` when it is not parked).
    """

    group: str
    state: dict[str, Any] | None
    version: int
    updated_at_ms: int | None
    last_seq: int | None
    buffered: int
    gap_open_since_ms: int | None
    parked_job_id: str | None
    parked: bool = False
    park_status: str | None = None
    parked_message_id: str | None = None


@dataclass(frozen=True, slots=True)
class JobSighting:
    """What a group's state item and park header say of one job (:meth:`GroupStateReader.find_job`).

    Attributes
    ----------
    group, job_id:
        The group and the job asked about.
    version:
        The state item's version read (0 without an item): when ``applied``, a version that includes
        the job (the first one that did is not recorded).
    applied:
        The job's transition is committed: its id is among the remembered applied ids (jobs without
        ``seq``, the last ``remember_job_ids``), or its ``seq`` is at or below the last one applied
        and not given up nor consumed by a dead job.
    seq_given_up:
        Its ``seq`` lies in a range ``SKIP_GAP`` gave up: it will never be applied.
    buffered:
        It waits in the reorder buffer for an earlier ``seq``.
    failed_runs:
        Failed runs so far (it is retried) while neither applied nor dead.
    dead_reason, dead_error_type, dead_error:
        Set when the group remembers the job dead (``dead_reason`` ``""`` when only its id is
        remembered).
    parked_at_job_id:
        The job id the group is parked at (``None`` when not parked, or parked at a malformed body).
    park_status:
        ``"PARKED"``, ``"RESUMING"`` or ``None``.
    cancel_reason, cancelled_by, cancelled_at_ms:
        Set when the group remembers the job cancelled (it is never applied); ``cancelled_at_ms`` is
        ``None`` otherwise.
    """

    group: str
    job_id: str
    version: int
    applied: bool = False
    seq_given_up: bool = False
    buffered: bool = False
    failed_runs: int = 0
    dead_reason: str | None = None
    dead_error_type: str | None = None
    dead_error: str | None = None
    parked_at_job_id: str | None = None
    park_status: str | None = None
    cancel_reason: str | None = None
    cancelled_by: str | None = None
    cancelled_at_ms: int | None = None


class GroupStateReader:
    """Reads group states from the group table.

    Parameters
    ----------
    table_name:
        The group table's name.
    client:
        A boto3 DynamoDB client; by default one is created from the environment.
    consistent_read:
        Read with ``ConsistentRead`` (the default: a read sees every commit that finished before
        it, at twice the read cost of an eventually consistent one). Each call can override it.
    """

    def __init__(
        self, table_name: str, client: DynamoDBClient | None = None, *, consistent_read: bool = True
    ) -> None:
        self.table_name = table_name
        self._client: DynamoDBClient = client or default_client(
            "dynamodb", "GroupStateReader", argument="client"
        )
        self._consistent_read = consistent_read

    def get(self, group: str, *, consistent_read: bool | None = None) -> dict[str, Any] | None:
        """Return the group's state, or ``None`` when it has none yet.

        Raises
        ------
        StateReadError
            The read failed (the message names the table, the group, the error and the fix).
        """
        item = self._item(group, STATE_SK, consistent_read)
        return None if item is None else self._decode(item).state

    def version(self, group: str, *, consistent_read: bool | None = None) -> int:
        """Return the group's state version (0 when the group has no item).

        Raises
        ------
        StateReadError
            The read failed.
        """
        item = self._item(group, STATE_SK, consistent_read)
        return 0 if item is None else self._decode(item).version

    def snapshot(self, group: str, *, consistent_read: bool | None = None) -> GroupSnapshot:
        """Return everything the table holds for the group, decoded (two ``GetItem`` calls).

        Raises
        ------
        StateReadError
            A read failed, or an item cannot be decoded.
        """
        item = self._item(group, STATE_SK, consistent_read)
        header = self._header(group, consistent_read)
        snapshot = GroupSnapshot(
            group,
            None,
            0,
            None,
            None,
            0,
            None,
            parked_job_id=None if header is None else header.dead_job_id,
            parked=header is not None,
            park_status=None if header is None else header.status,
            parked_message_id=None if header is None else header.dead_message_id,
        )
        if item is None:
            return snapshot
        decoded = self._decode(item)
        book = decoded.book
        updated = item.get(STATE_ATTR_UPDATED_AT, {}).get("N")
        return replace(
            snapshot,
            group=decoded.group,
            state=decoded.state,
            version=decoded.version,
            updated_at_ms=None if updated is None else int(updated),
            last_seq=book.last_seq,
            buffered=len(book.buffer),
            gap_open_since_ms=book.gap_since_ms,
        )

    def find_job(
        self, group: str, job_id: str, *, seq: int | None = None, consistent_read: bool | None = None
    ) -> JobSighting:
        """What the group's items say of one job (two ``GetItem`` calls: the state item, the header).

        ``seq`` is the job's ``seq`` when it carries one: such jobs are recognised by the group's last
        ``seq`` (they are not among the remembered ids), so without it an applied job with a ``seq``
        reads as not applied.

        Raises
        ------
        StateReadError
            A read failed, or an item cannot be decoded.
        """
        item = self._item(group, STATE_SK, consistent_read)
        header = self._header(group, consistent_read)
        return job_sighting(group, job_id, None if item is None else self._decode(item), header, seq=seq)

    def decode(self, item: dict[str, Any]) -> GroupState:
        """A state item read elsewhere (a batch read), decoded.

        Raises
        ------
        StateReadError
            The item cannot be decoded.
        """
        return self._decode(item)

    def decode_header(self, group: str, item: dict[str, Any]) -> ParkHeader:
        """A park header item read elsewhere (a batch read), decoded.

        Raises
        ------
        StateReadError
            The item cannot be decoded.
        """
        try:
            return decode_header(item)
        except (KeyError, TypeError, ValueError) as exc:
            raise StateReadError(
                f"table {self.table_name!r}: the park header of group {group!r} cannot be read "
                f"({type(exc).__name__}: {exc}); it was not written by this library's runtime"
            ) from exc

    def _header(self, group: str, consistent_read: bool | None) -> ParkHeader | None:
        """The group's park header (``None`` when it is not parked)."""
        header_item = self._item(group, SK_PARK, consistent_read)
        return None if header_item is None else self.decode_header(group, header_item)

    def _item(self, group: str, sort_key: str, consistent_read: bool | None) -> dict[str, Any] | None:
        """One item of the group (``None`` when there is none)."""
        consistent = self._consistent_read if consistent_read is None else consistent_read
        try:
            with environment_errors(f"group {group!r} was not read from table {self.table_name!r}"):
                response = self._client.get_item(
                    TableName=self.table_name,
                    Key={GROUP_ATTR_GROUP: {"S": group}, GROUP_ATTR_SK: {"S": sort_key}},
                    ConsistentRead=consistent,
                )
        except ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", "Unknown"))
            fix = _FIXES.get(code, "retry; if it persists, check the table and the caller's permissions")
            raise StateReadError(
                f"reading the state of group {group!r} from table {self.table_name!r} failed: {code}: "
                f"{error.get('Message', '')}; {fix}"
            ) from exc
        item = cast("dict[str, Any] | None", response.get("Item"))
        return item or None

    def _decode(self, item: dict[str, Any]) -> GroupState:
        try:
            return decode_item(item)
        except ConstructsFifoRuntimeError as exc:
            raise StateReadError(f"table {self.table_name!r}: {exc}") from exc


def job_sighting(
    group: str, job_id: str, state: GroupState | None, header: ParkHeader | None, *, seq: int | None = None
) -> JobSighting:
    """What a group's decoded state item (``None``: none) and park header say of one job (pure).

    See :meth:`GroupStateReader.find_job`, which reads them one by one; a batch read decodes them with
    :meth:`GroupStateReader.decode` and :meth:`GroupStateReader.decode_header`.
    """
    sighting = JobSighting(
        group,
        job_id,
        0,
        parked_at_job_id=None if header is None else header.dead_job_id,
        park_status=None if header is None else header.status,
    )
    if state is None:
        return sighting
    book = state.book
    sighting = replace(sighting, version=state.version)
    cancelled = next((entry for entry in state.cancelled if entry.job_id == job_id), None)
    if cancelled is not None:
        return replace(
            sighting,
            cancel_reason=cancelled.reason or None,
            cancelled_by=cancelled.by or None,
            cancelled_at_ms=cancelled.at_ms,
        )
    dead = book.parked if book.parked is not None and book.parked.job_id == job_id else None
    dead = dead or next((entry for entry in reversed(book.dead_entries) if entry.job_id == job_id), None)
    if dead is not None or job_id in book.dead:
        return replace(
            sighting,
            dead_reason="" if dead is None else dead.reason.value,
            dead_error_type=None if dead is None else dead.error_type,
            dead_error=None if dead is None else dead.error,
        )
    if any(buffered.job_id == job_id for buffered in book.buffer):
        return replace(sighting, buffered=True)
    if job_key(job_id) in book.applied:
        return replace(sighting, applied=True)
    if seq is not None and book.last_seq is not None and seq <= book.last_seq:
        given_up = any(skipped.first <= seq <= skipped.last for skipped in book.skipped)
        return replace(sighting, applied=not given_up, seq_given_up=given_up)
    return replace(sighting, failed_runs=int(book.attempts.get(job_id, 0)))
