"""Fidelity patches: make moto 5.2.5 behave like AWS where constructs-fifo depends on it.

This package is the one place that changes moto, split as moto splits: :mod:`.sqs_models` (state and
behaviour; its FIFO receive asks :mod:`constructs_fifo.local.emulator.fifo_rule`, the project's one
statement of the FIFO rule), :mod:`.sqs_move_tasks` (dead-letter queue redrive), :mod:`.sqs_requests`
(what SQS refuses or ignores in a request), :mod:`.sqs_responses` (request parsing),
:mod:`.dynamodb_models`, :mod:`.cloudformation` and :mod:`.cloudformation_change_sets`,
:mod:`.server_dispatch` (moto's server);
:mod:`.registry` remembers what was replaced. Every patch restores one documented AWS behaviour and
names the AWS page it comes from (and, where no page states it, the observation on AWS). :func:`apply`
is idempotent and refuses any moto version other than
:data:`MOTO_VERSION` (the seams are moto 5.2.5's private functions; on another version they may have
moved, and a silently half-applied patch is worse than none). :func:`revert` undoes every patch
(tests use it to compare with moto as shipped).

What is corrected (see ``docs/emulator.md`` for the table with observations):

1. Lambda event source mappings are inert: moto invoked the function (in Docker) from every
   SendMessage to a queue with a mapping. Mappings stay creatable and listable; nothing invokes.
2. FIFO receive, by :mod:`~constructs_fifo.local.emulator.fifo_rule`: a group served from its front
   while its messages are visible, up to the first in flight; one group's messages first; groups in
   the order they last became available.
3. FIFO deduplication: 5 minutes from the first send, also after delete, forgotten by PurgeQueue;
   ``DeduplicationScope`` ``messageGroup`` (ids seen before a switch to it still count across
   groups); a duplicate send succeeds with the original MessageId and delivers nothing.
4. SequenceNumber: 20 digits, increasing per queue.
5. Moves to a FIFO dead-letter queue bypass the DLQ's deduplication and keep the message as it was.
6. MessageGroupId / MessageDeduplicationId: 1 to 128 alphanumeric or punctuation characters, with
   AWS's error text;
   ``RedriveAllowPolicy`` is returned by GetQueueAttributes.
7. ``StartMessageMoveTask`` / ``ListMessageMoveTasks`` / ``CancelMessageMoveTask`` (DLQ redrive): a
   background task at ``MaxNumberOfMessagesPerSecond``, cancellable, each message back to its own
   source queue, with AWS's statuses, errors and task handle.
8. CloudFormation: a FIFO queue without ``QueueName`` gets a ``.fifo`` name; a table's
   ``TimeToLiveSpecification`` is applied; a stack created or updated by executing a change set
   (what ``cdk deploy`` does) has its ``Outputs`` and its template; ``Ref`` of a queue is its URL in
   the endpoint's form (as the emulator's SQS serves it); change sets belong to one stack
   (:mod:`.cloudformation_change_sets`: found by ARN or by name and stack, deleted, executed only
   when AVAILABLE, listed per stack), so any number of deploys of any number of stacks succeed.
9. Speed (same behaviour): a cheap clock for message visibility and a send-path check that does not
   count the whole queue; moto 5.2.5 took O(n²) time to send n messages to one queue.
10. Speed (same behaviour): the server finds a request's service once per host, not by listing moto's
    package directory under a global lock on every request, which serialized concurrent requests.
11. Requests (:mod:`.sqs_requests`, :mod:`.sqs_responses`, :mod:`.server_dispatch`): a FIFO
    DeleteMessage with an expired receipt handle is refused; ``DelaySeconds=0`` on a FIFO send keeps
    the queue's delay; a FIFO batch entry without ``MessageGroupId`` is ``InvalidParameterValue``; a
    standard queue given FIFO attributes, a ``.fifo`` name or a ``MessageDeduplicationId`` (in a
    batch: that entry fails) is refused; CreateQueue of an existing queue names the attribute that
    differs; ``FifoQueue`` cannot change after creation; a signed GET (query API, also presigned)
    reaches SQS and is parsed.
12. DynamoDB under concurrent requests (:mod:`.dynamodb_models`): one lock, so TransactWriteItems
    never fails with HTTP 500 nor rolls back another request's write.
13. EventBridge (:mod:`.events_models`): ``Ref`` of a bus is its name; a rule's SQS target gets the
    event as AWS sends it (with ``account``; ``Input`` and ``InputPath`` honoured).
14. CloudFormation creates ``AWS::Pipes::Pipe`` (:mod:`.pipes_cloudformation`), as configuration:
    nothing runs it but the local pipe runner.

Examples
--------
>>> from constructs_fifo.local.emulator import patches
>>> patches.apply()  # doctest: +SKIP
>>> patches.is_applied()  # doctest: +SKIP
True
"""

from __future__ import annotations

from importlib import metadata
from typing import Final

from constructs_fifo.local.emulator.patches import (
    cloudformation,
    cloudformation_change_sets,
    dynamodb_models,
    events_models,
    pipes_cloudformation,
    registry,
    server_dispatch,
    sqs_models,
    sqs_move_tasks,
    sqs_requests,
    sqs_responses,
)
from constructs_fifo.local.errors import UnsupportedMotoVersionError

__all__ = [
    "MOTO_VERSION",
    "apply",
    "check_moto_version",
    "installed_moto_version",
    "is_applied",
    "revert",
]

MOTO_VERSION: Final = "5.2.5"
"""The one moto version these patches were written and tested against."""


def installed_moto_version() -> str:
    """The installed moto's version, ``(none)`` when moto is not installed."""
    try:
        return metadata.version("moto")
    except metadata.PackageNotFoundError:
        return "(none)"


def check_moto_version(installed: str) -> None:
    """Raise :class:`UnsupportedMotoVersionError` unless ``installed`` is :data:`MOTO_VERSION`."""
    if installed != MOTO_VERSION:
        raise UnsupportedMotoVersionError(
            f"moto {installed} is installed, but the constructs-fifo fidelity patches target moto "
            f"{MOTO_VERSION} only (they replace private moto functions that change between versions)",
            f"install the pinned version: pip install 'moto[server]=={MOTO_VERSION}' "
            "(or pip install 'constructs-fifo[local]')",
        )


def is_applied() -> bool:
    """Return whether :func:`apply` has patched moto (and :func:`revert` has not undone it)."""
    return registry.is_applied()


def apply() -> None:
    """Patch moto so that it behaves like AWS where constructs-fifo depends on it.

    Idempotent: a second call does nothing.

    Raises
    ------
    UnsupportedMotoVersionError
        When the installed moto is not :data:`MOTO_VERSION`.
    """
    check_moto_version(installed_moto_version())
    with sqs_models.SQS_LOCK:
        if registry.is_applied():
            return
        sqs_models.patch()
        sqs_move_tasks.patch()
        sqs_requests.patch()
        sqs_responses.patch()
        cloudformation.patch()
        cloudformation_change_sets.patch()
        server_dispatch.patch()
        dynamodb_models.patch()
        events_models.patch()
        pipes_cloudformation.patch()


def revert() -> None:
    """Undo every patch :func:`apply` made (state already in moto's backends stays)."""
    with sqs_models.SQS_LOCK:
        registry.revert()
