"""Send jobs to an ``OrderedAgentQueue``: the message envelope, validation, batching and retries.

The body of every message is the JSON envelope the runtime reads::

    {"jobId": "...", "type": "...", "payload": {...}, "seq": 7}

``seq`` is optional: the producer's own sequence number within the group (an aggregate's version, for
example). **A group's sequence starts at 0** (``FIRST_SEQ``, the runtime's ``first_seq``): its first
job carries ``seq=0``, then 1, 2, ... State mode applies a group's jobs in ``seq`` order whatever order
they arrive in, and skips a ``seq`` it already applied (see the README); a group whose first job
carries a higher ``seq`` waits for 0 (the runtime logs a ``firstSeq`` warning). Every message also
carries the message attributes ``jobId``, ``jobType`` and ``group``, so a dead-letter queue can be
triaged without parsing bodies.

The message group id orders jobs (one group per workspace, e.g. ``ws#42``); the deduplication id
defaults to the job id, so a producer that retries a send after a timeout does not enqueue the job
twice (SQS drops a repeated deduplication id for 5 minutes).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from constructs_fifo.client.environment import default_s3_client, default_sqs_client, environment_error
from constructs_fifo.client.errors import BatchSendError, InvalidJobError, OutcomeQueryError, SendFailedError
from constructs_fifo.client.limits import ID_PUNCTUATION, MAX_BATCH_ENTRIES, MAX_ID_LENGTH, MAX_MESSAGE_BYTES
from constructs_fifo.client.results import FailedEntry, SendResult
from constructs_fifo.runtime.constants import DEFAULT_FIRST_SEQ
from constructs_fifo.runtime.payloads.pointer import new_key, pointer_body, size_attribute

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

    from constructs_fifo.client.job_status import JobOutcome
    from constructs_fifo.client.outcomes import JobOutcomes

__all__ = [
    "FIRST_SEQ",
    "RETRYABLE_ERROR_CODES",
    "JobMessage",
    "JobProducer",
    "build_body",
    "message_attributes",
    "validate_job",
]

#: The ``seq`` of a group's first job: the runtime's ``first_seq`` (the settings spec's row), so the
#: producer refuses what the runtime would wait for forever.
FIRST_SEQ: Final = DEFAULT_FIRST_SEQ

#: Batch entry error codes worth retrying (the service's side, not the request's).
RETRYABLE_ERROR_CODES: Final = frozenset(
    {
        "InternalError",
        "InternalFailure",
        "ServiceUnavailable",
        "RequestThrottled",
        "ThrottlingException",
        "Throttling",
        "KmsThrottled",
        "KMS.ThrottlingException",
    }
)

_ID_PATTERN: Final = re.compile("[A-Za-z0-9" + re.escape(ID_PUNCTUATION) + "]+")
_ID_RULE: Final = f"1 to {MAX_ID_LENGTH} characters, each a letter, a digit or one of {ID_PUNCTUATION}"


@dataclass(frozen=True, slots=True)
class JobMessage:
    """One job to send.

    Attributes
    ----------
    job_id:
        The job's id: the key of its claim, unique per job, stable across resends.
    job_type:
        What the job does, e.g. ``apply_patch``.
    payload:
        Any JSON-serialisable value.
    group:
        The message group id: jobs of one group run one at a time, in send order.
    deduplication_id:
        Defaults to ``job_id``.
    seq:
        Optional: the producer's sequence number of the job within its group, from 0 (the group's
        first job) up, e.g. the aggregate's version. State mode applies jobs in ``seq`` order and
        skips repeats.
    supersede:
        Optional, claim mode: a key within the group (e.g. ``"run_tests"``); the newest job of the
        key runs and older ones not started are skipped. Send it with
        :meth:`~constructs_fifo.client.steering.JobSteering.send_superseding`, which marks it first.
    """

    job_id: str
    job_type: str
    payload: Any
    group: str
    deduplication_id: str | None = None
    seq: int | None = None
    supersede: str | None = None


def message_attributes(job: JobMessage) -> dict[str, Any]:
    """The message attributes every job carries: ``jobId``, ``jobType`` and ``group``.

    Examples
    --------
    >>> message_attributes(JobMessage("j-1", "run_tests", {}, group="ws#1"))["jobType"]
    {'DataType': 'String', 'StringValue': 'run_tests'}
    """
    return {
        name: {"DataType": "String", "StringValue": value}
        for name, value in (("jobId", job.job_id), ("jobType", job.job_type), ("group", job.group))
    }


def _attributes_size(attributes: dict[str, Any]) -> int:
    """What SQS counts of the attributes towards the message size: names, types and values."""
    return sum(
        len(name.encode()) + len(value["DataType"].encode()) + len(value["StringValue"].encode())
        for name, value in attributes.items()
    )


def build_body(job: JobMessage) -> str:
    """Return the JSON envelope of ``job``: ``{"jobId", "type", "payload"}`` and ``seq`` when given.

    Raises
    ------
    InvalidJobError
        The payload is not JSON-serialisable.
    """
    try:
        envelope: dict[str, Any] = {"jobId": job.job_id, "type": job.job_type, "payload": job.payload}
        if job.seq is not None:
            envelope["seq"] = job.seq
        if job.supersede is not None:
            envelope["supersede"] = job.supersede
        return json.dumps(
            envelope,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError) as exc:
        raise InvalidJobError(
            f"job {job.job_id!r}: payload is not JSON-serialisable ({exc}); the body must be JSON. "
            "Fix: pass only dicts, lists, strings, numbers, booleans and None (finite numbers)."
        ) from exc


#: Why a job id follows SQS's deduplication id rule (said where a job id breaks it).
_JOB_ID_IS_DEDUP = (
    " for a job id, since it is the message's deduplication id unless deduplication_id is passed"
)


def _check_id(job_id: str, field: str, value: object) -> None:
    # A job id breaking the rule is named as itself, not as the deduplication id it stands for.
    prefix, why = ("", _JOB_ID_IS_DEDUP) if field == "job_id" else (f"job {job_id!r}: ", "")
    if not isinstance(value, str) or not value:
        raise InvalidJobError(
            f"{prefix}{field} {value!r} is not allowed: it must be a non-empty string of {_ID_RULE}. "
            f"Fix: pass a non-empty {field}."
        )
    if len(value) > MAX_ID_LENGTH:
        raise InvalidJobError(
            f"{prefix}{field} {value[:40]!r}... is {len(value)} characters long; SQS allows "
            f"{_ID_RULE}{why}. Fix: shorten it, e.g. to a hash of the value."
        )
    if not _ID_PATTERN.fullmatch(value):
        bad = sorted({c for c in value if not _ID_PATTERN.fullmatch(c)})
        raise InvalidJobError(
            f"{prefix}{field} {value!r} contains {''.join(bad)!r}; SQS allows {_ID_RULE}{why}. "
            "Fix: replace those characters (spaces and non-ASCII letters are not allowed)."
        )


def validate_job(job: JobMessage, *, offloaded: bool = False) -> str:
    """Check ``job`` against SQS's rules and return its body.

    Parameters
    ----------
    job:
        The job to check.
    offloaded:
        The queue has a payload bucket (``large_payloads=True``): a body over SQS's 1 MiB is not refused,
        the producer puts it in the bucket and sends a pointer.

    Returns
    -------
    str
        The JSON body to send.

    Raises
    ------
    InvalidJobError
        The job id, type, group id, deduplication id or body size breaks a rule; the message names the
        value, the rule and the fix.

    Examples
    --------
    >>> validate_job(JobMessage("j-1", "run_tests", {}, group="ws#1"))
    '{"jobId":"j-1","type":"run_tests","payload":{}}'
    """
    if not isinstance(job.job_id, str) or not job.job_id:
        raise InvalidJobError(
            f"job_id {job.job_id!r} is not allowed: it must be a non-empty string. "
            "Fix: give every job a unique, stable id."
        )
    if not isinstance(job.job_type, str) or not job.job_type:
        raise InvalidJobError(
            f"job {job.job_id!r}: job_type {job.job_type!r} is not allowed: it must be a non-empty string. "
            "Fix: name what the job does, e.g. 'apply_patch'."
        )
    _check_id(job.job_id, "group", job.group)
    if job.deduplication_id is None:
        _check_id(job.job_id, "job_id", job.job_id)
    else:
        _check_id(job.job_id, "deduplication_id", job.deduplication_id)
    if job.seq is not None and (
        isinstance(job.seq, bool) or not isinstance(job.seq, int) or job.seq < FIRST_SEQ
    ):
        raise InvalidJobError(
            f"job {job.job_id!r}: seq {job.seq!r} is not allowed: it must be a non-negative integer, the "
            f"job's place in its group's sequence, which starts at {FIRST_SEQ}. Fix: pass the aggregate's "
            "version (0, 1, 2 ...), or no seq."
        )
    body = build_body(job)
    size = len(body.encode("utf-8")) + _attributes_size(message_attributes(job))
    if size > MAX_MESSAGE_BYTES and not offloaded:
        raise InvalidJobError(
            f"job {job.job_id!r}: body and attributes are {size} bytes; SQS allows at most "
            f"{MAX_MESSAGE_BYTES} bytes (1 MiB), and this producer has no payload bucket. Fix: build the "
            "queue with large_payloads=True and send with its bucket (QueueClient.from_stack or "
            "from_environment reads it; JobProducer(..., payload_bucket=...)), or store the large part "
            "elsewhere and send a reference to it in the payload."
        )
    return body


def _message_size(job: JobMessage, body: str) -> int:
    """What SQS counts of a job's message: the body and the attributes."""
    return len(body.encode("utf-8")) + _attributes_size(message_attributes(job))


class JobProducer:
    """Send jobs to a FIFO queue of an ``OrderedAgentQueue``.

    Parameters
    ----------
    queue_url:
        The queue's URL (the stack output ``QueueUrl``).
    sqs_client:
        A boto3 SQS client; by default ``boto3.client("sqs")`` (which honours ``AWS_ENDPOINT_URL``), in
        ``AWS_REGION`` when set (as ``constructs-fifo`` and Lambda read it), else boto3's region
        (``AWS_DEFAULT_REGION``, the profile's).
    max_attempts:
        How many times a batch entry that failed with a retryable error is tried in all.
    backoff_seconds:
        First delay between attempts; doubles every attempt.
    sleep:
        Injectable for tests.
    outcomes:
        Where :meth:`send_and_wait` reads the job's outcome: a
        :class:`~constructs_fifo.client.outcomes.JobOutcomes` on the same queue's tables.
    payload_bucket:
        The queue's payload bucket (``large_payloads=True``; the ``PayloadBucketName`` output): a message
        over SQS's 1 MiB has its body put there (key: a fresh uuid) and is sent as the SQS Extended
        Client Library's pointer (docs/limits.md). ``None``: such a job is refused.
    s3_client:
        A boto3 S3 client for the bucket; by default made on the first large body.

    Raises
    ------
    InvalidJobError
        ``queue_url`` is not a FIFO queue's, or ``max_attempts`` is below 1.
    RegionNotSetError
        No ``sqs_client`` and no region for the default one.

    Examples
    --------
    >>> producer = JobProducer(queue_url)  # doctest: +SKIP
    >>> producer.send("job-1", "apply_patch", {"diff": "..."}, group="ws#42")  # doctest: +SKIP
    SendResult(message_id='...', sequence_number='...', job_id='job-1')
    """

    def __init__(
        self,
        queue_url: str,
        *,
        sqs_client: SQSClient | None = None,
        max_attempts: int = 5,
        backoff_seconds: float = 0.1,
        sleep: Callable[[float], None] = time.sleep,
        outcomes: JobOutcomes | None = None,
        payload_bucket: str | None = None,
        s3_client: Any | None = None,
    ) -> None:
        if not queue_url.endswith(".fifo"):
            raise InvalidJobError(
                f"queue_url {queue_url!r} is not a FIFO queue: its name must end in '.fifo'. "
                "Fix: pass the QueueUrl output of the stack that holds the OrderedAgentQueue."
            )
        if max_attempts < 1:
            raise InvalidJobError(f"max_attempts {max_attempts!r} must be at least 1. Fix: pass 1 or more.")
        self.queue_url = queue_url
        self._sqs: SQSClient = sqs_client if sqs_client is not None else default_sqs_client()
        self._max_attempts = max_attempts
        self._backoff_seconds = backoff_seconds
        self._sleep = sleep
        self._outcomes = outcomes
        self.payload_bucket = payload_bucket
        self._s3 = s3_client

    def _message(self, job: JobMessage) -> tuple[str, dict[str, Any]]:
        """The checked body and attributes of ``job``: a body over 1 MiB put in the payload bucket, and
        the message the Extended Client's pointer with its ``ExtendedPayloadSize``."""
        body = validate_job(job, offloaded=self.payload_bucket is not None)
        attributes = message_attributes(job)
        if self.payload_bucket is None or _message_size(job, body) <= MAX_MESSAGE_BYTES:
            return body, attributes
        if self._s3 is None:
            self._s3 = default_s3_client()
        data = body.encode("utf-8")
        key = new_key()
        try:
            self._s3.put_object(Bucket=self.payload_bucket, Key=key, Body=data)
        except ClientError as exc:
            raise SendFailedError(
                f"job {job.job_id!r} was not sent: its {len(data)}-byte body could not be put in the payload "
                f"bucket {self.payload_bucket!r}: {str(exc).rstrip('.')}. Fix: grant the sender the queue's "
                "grant_enqueue or grant_client (s3:PutObject on the bucket) and send it again."
            ) from exc
        return pointer_body(self.payload_bucket, key), {**attributes, **size_attribute(len(data))}

    def send(
        self,
        job_id: str,
        job_type: str,
        payload: Any,
        *,
        group: str,
        deduplication_id: str | None = None,
        seq: int | None = None,
    ) -> SendResult:
        """Send one job.

        Raises
        ------
        InvalidJobError
            The job breaks an SQS rule (nothing was sent).
        SendFailedError
            SQS refused the send (after botocore's own retries); the cause is chained.
        ProducerEnvironmentError
            No credentials (:class:`CredentialsNotFoundError`) or no connection
            (:class:`EndpointNotReachableError`); the cause is chained.
        """
        job = JobMessage(job_id, job_type, payload, group, deduplication_id, seq)
        body, attributes = self._message(job)
        try:
            response = self._sqs.send_message(
                QueueUrl=self.queue_url,
                MessageBody=body,
                MessageGroupId=job.group,
                MessageDeduplicationId=job.deduplication_id or job.job_id,
                MessageAttributes=attributes,
            )
        except ClientError as exc:
            raise SendFailedError(
                # AWS's message ends with its own period ("The specified queue does not exist.")
                f"job {job_id!r} was not sent to {self.queue_url}: {str(exc).rstrip('.')}. Fix the cause and "
                "send it again "
                "with the same job id (its deduplication id keeps a resend from being delivered twice)."
            ) from exc
        except BotoCoreError as exc:
            error = environment_error(
                exc, f"job {job_id!r} was not sent to {self.queue_url}", target=self.queue_url
            )
            if error is None:
                raise
            raise error from exc
        return SendResult(response["MessageId"], response.get("SequenceNumber"), job_id)

    def send_and_wait(
        self,
        job_id: str,
        job_type: str,
        payload: Any,
        *,
        group: str,
        timeout_seconds: float,
        deduplication_id: str | None = None,
        seq: int | None = None,
        stop_at_parked: bool = False,
    ) -> JobOutcome:
        """Send one job (:meth:`send`), then wait for its outcome (``JobOutcomes.wait``).

        For a caller that must answer with the job's result (an MCP server's ``tools/call``). The
        outcome is the last one read when the timeout passed first (``pending`` or ``running``): the
        job goes on; ``JobOutcomes.wait`` can be called again with its id and group. A job parked behind
        a dead one is waited through, as ``JobOutcomes.wait`` does, unless ``stop_at_parked``.

        Examples
        --------
        >>> producer = JobProducer(queue_url, outcomes=JobOutcomes(claim_table="..."))  # doctest: +SKIP
        >>> outcome = producer.send_and_wait(  # doctest: +SKIP
        ...     "call-7", "run_tests", {}, group="ws#1", timeout_seconds=30)
        >>> outcome.status, outcome.result  # doctest: +SKIP
        (<JobStatus.SUCCEEDED: 'succeeded'>, {'passed': True})

        Raises
        ------
        OutcomeQueryError
            The producer was built without ``outcomes`` (nothing was sent).
        InvalidJobError, SendFailedError, ProducerEnvironmentError
            As :meth:`send`.
        OutcomeReadError
            The outcome could not be read (the job was sent).
        """
        outcomes = self._outcomes
        if outcomes is None:
            raise OutcomeQueryError(
                f"job {job_id!r}: send_and_wait needs to know where outcomes are read. Fix: build the "
                "producer with outcomes=JobOutcomes(claim_table=..., group_table=...)."
            )
        self.send(job_id, job_type, payload, group=group, deduplication_id=deduplication_id, seq=seq)
        return outcomes.wait(
            job_id, timeout_seconds, group=group, seq=seq, sent=True, stop_at_parked=stop_at_parked
        )

    def send_batch(self, jobs: Sequence[JobMessage]) -> list[SendResult]:
        """Send many jobs, in order, in SendMessageBatch calls of at most 10 entries and 1 MiB.

        Every job is validated before the first call. Entries that fail with a retryable error
        (throttling, internal errors) are sent again with a backoff, still in their order; any other
        failure raises.

        Returns
        -------
        list[SendResult]
            One result per job, in the order of ``jobs``.

        Raises
        ------
        InvalidJobError
            A job breaks an SQS rule (nothing was sent).
        BatchSendError
            Some jobs were not sent; it lists them and the results of those that were.
        ProducerEnvironmentError
            No credentials or no connection; its ``succeeded`` lists the jobs sent before.
        """
        for job in jobs:  # every job checked before anything is put or sent
            validate_job(job, offloaded=self.payload_bucket is not None)
        messages = [self._message(job) for job in jobs]
        results: list[SendResult | None] = [None] * len(jobs)
        failed: list[FailedEntry] = []
        sizes = [len(body.encode("utf-8")) + _attributes_size(attributes) for body, attributes in messages]
        for chunk in self._chunks(sizes):
            try:
                failed.extend(self._send_chunk(jobs, messages, chunk, results))
            except BotoCoreError as exc:
                done = [r for r in results if r is not None]
                error = environment_error(
                    exc,
                    f"{len(jobs) - len(done)} of {len(jobs)} job(s) were not sent to {self.queue_url}",
                    done,
                    target=self.queue_url,
                )
                if error is None:
                    raise
                raise error from exc
            if failed:
                # Later jobs may belong to the same groups: sending them would overtake the failed ones.
                break
        succeeded = [r for r in results if r is not None]
        if failed:
            sent = {r.job_id for r in succeeded}
            failed_ids = {f.job_id for f in failed}
            unsent = [
                FailedEntry(job.job_id, "NotAttempted", "not sent after an earlier failure", False)
                for job in jobs
                if job.job_id not in sent and job.job_id not in failed_ids
            ]
            raise BatchSendError(failed + unsent, succeeded)
        return succeeded

    @staticmethod
    def _chunks(sizes: Sequence[int]) -> list[list[int]]:
        """Indexes of the jobs in SendMessageBatch calls: at most 10 entries and 1 MiB each."""
        chunks: list[list[int]] = []
        current: list[int] = []
        size = 0
        for index, body_size in enumerate(sizes):
            if current and (len(current) == MAX_BATCH_ENTRIES or size + body_size > MAX_MESSAGE_BYTES):
                chunks.append(current)
                current, size = [], 0
            current.append(index)
            size += body_size
        if current:
            chunks.append(current)
        return chunks

    def _send_chunk(
        self,
        jobs: Sequence[JobMessage],
        messages: Sequence[tuple[str, dict[str, Any]]],
        chunk: list[int],
        results: list[SendResult | None],
    ) -> list[FailedEntry]:
        pending = list(chunk)
        for attempt in range(1, self._max_attempts + 1):
            entries: list[SendMessageBatchRequestEntryTypeDef] = [
                {
                    "Id": str(index),
                    "MessageBody": messages[index][0],
                    "MessageGroupId": jobs[index].group,
                    "MessageDeduplicationId": jobs[index].deduplication_id or jobs[index].job_id,
                    "MessageAttributes": messages[index][1],
                }
                for index in pending
            ]
            try:
                response = self._sqs.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "ClientError")
                message = exc.response.get("Error", {}).get("Message", str(exc))
                if code in RETRYABLE_ERROR_CODES and attempt < self._max_attempts:
                    self._sleep(self._backoff_seconds * 2 ** (attempt - 1))
                    continue
                return [FailedEntry(jobs[i].job_id, code, message, True) for i in pending]
            for ok in response.get("Successful", []):
                index = int(ok["Id"])
                results[index] = SendResult(ok["MessageId"], ok.get("SequenceNumber"), jobs[index].job_id)
            retry: list[int] = []
            retry_entries: list[FailedEntry] = []
            final: list[FailedEntry] = []
            for bad in response.get("Failed", []):
                index = int(bad["Id"])
                entry = FailedEntry(
                    jobs[index].job_id,
                    bad.get("Code", ""),
                    bad.get("Message", ""),
                    bad.get("SenderFault", True),
                )
                if (bad.get("Code") in RETRYABLE_ERROR_CODES or not entry.sender_fault) and (
                    attempt < self._max_attempts
                ):
                    retry.append(index)
                    retry_entries.append(entry)
                else:
                    final.append(entry)
            if final:
                # Not retrying the retryable ones either: they may be later jobs of a failed group.
                return final + retry_entries
            if not retry:
                return []
            pending = sorted(retry)
            self._sleep(self._backoff_seconds * 2 ** (attempt - 1))
        return []  # pragma: no cover - the loop always returns
