"""``constructs-fifo demo --scenario events``: seed 004's shuffled account events through the sample's bus.

The sample app's ``Accounts`` queue (state mode) is fed by its EventBridge bus through an
``EventBusIngress`` (a rule, a standard staging queue, a pipe reading the group, the job id and
``seq`` from the event). The scenario:

1. deploys the sample app (unless reusing a deployed stack), as the other scenarios do;
2. publishes every account's story (:mod:`~constructs_fifo.demo.scenarios.events`) in one
   seeded, shuffled order on the bus (``PutEvents``, 10 entries a call);
3. runs the stack's pipe until the staging queue is empty (the local pipe runner: on the emulator
   nothing else moves a pipe's records) and drains the accounts queue (the local event source
   mapping, running the deployed ``accounts.apply_event``);
4. reads each account's state and compares it with the state its events give in the order they
   happened: state mode applies each account's events in ``seq`` order, so every account must
   converge. Beside it, the state each account would end in without ``seq`` (applied in the order the
   pipe delivered, which is the publish order): the seed's bug, computed, not deployed a second time.

Passes when every account converged and the pipe sent every record.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from botocore.exceptions import ClientError

from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.demo import steps
from constructs_fifo.demo.errors import DemoError
from constructs_fifo.demo.sample_app import ACCOUNT_EVENT_BUS, ACCOUNT_QUEUE, JOB_CODE_DIR
from constructs_fifo.demo.scenarios.events import (
    EVENT_SOURCE,
    AccountAgent,
    AccountEvent,
    EventsComparison,
    arrival_states,
    compare,
    event_stream,
    load_account_agent,
)
from constructs_fifo.demo.steps import DemoOptions, Phase, Reporter
from constructs_fifo.local.pipes.runner import PipeRunner
from constructs_fifo.stacks.deployed import find_queues, select_queue

__all__ = [
    "DEFAULT_ACCOUNTS",
    "MAX_PUT_EVENTS_ENTRIES",
    "EventsResult",
    "publish",
    "read_states",
    "run_events",
]

#: Accounts in the demo's stream (five events each): enough that several diverge without seq.
DEFAULT_ACCOUNTS: Final = 10
#: AWS: API_PutEvents, at most 10 entries per request.
MAX_PUT_EVENTS_ENTRIES: Final = 10


def publish(stream: Sequence[AccountEvent], *, events_client: Any, bus: str = ACCOUNT_EVENT_BUS) -> int:
    """Publish ``stream`` on ``bus`` in its order, 10 entries a ``PutEvents``; return how many.

    Raises
    ------
    DemoError
        The bus does not exist, or EventBridge refused an entry.
    """
    for start in range(0, len(stream), MAX_PUT_EVENTS_ENTRIES):
        batch = stream[start : start + MAX_PUT_EVENTS_ENTRIES]
        entries = [
            {
                "Source": EVENT_SOURCE,
                "DetailType": event.event_type,
                "Detail": json.dumps(event.detail()),
                "EventBusName": bus,
            }
            for event in batch
        ]
        try:
            response = events_client.put_events(Entries=entries)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise
            raise DemoError(
                f"PutEvents found no bus {bus!r} ({error}): the events scenario publishes on the sample "
                "app's bus",
                "deploy the sample app (app.py) with its Accounts queue and bus, or pass --stack naming it",
            ) from error
        if response.get("FailedEntryCount"):
            failed = [entry for entry in response.get("Entries", []) if entry.get("ErrorCode")]
            first = failed[0] if failed else {}
            raise DemoError(
                f"PutEvents on bus {bus!r} refused {response['FailedEntryCount']} of {len(batch)} entries, "
                f"the first with {first.get('ErrorCode')}: {first.get('ErrorMessage')}",
                "fix the cause EventBridge names (is the sample app deployed with its bus?) and run again",
            )
    return len(stream)


def read_states(
    accounts: Sequence[str], *, group_table: str, dynamodb_client: Any
) -> dict[str, dict[str, Any] | None]:
    """Each account's state as the accounts queue's state table holds it (its group is the account id)."""
    reader = GroupStateReader(group_table, dynamodb_client)
    return {account: reader.get(account, consistent_read=True) for account in accounts}


@dataclass
class EventsResult:
    """What the run published, what the accounts ended as, and both comparisons (``agent``, the
    sample's job code, gives the states each order should end in)."""

    stream: list[AccountEvent]
    observed: Mapping[str, Mapping[str, Any] | None]
    agent: AccountAgent
    pipe_stats: list[dict[str, Any]] = field(default_factory=list)
    drain_stats: dict[str, Any] = field(default_factory=dict)
    timings: Phase = field(default_factory=Phase)

    @property
    def accounts(self) -> list[str]:
        return sorted({event.account_id for event in self.stream})

    @property
    def with_seq(self) -> EventsComparison:
        """The deployed queue's states against the in-order ones."""
        return compare(self.stream, self.observed, self.agent)

    @property
    def without_seq(self) -> EventsComparison:
        """What a consumer ignoring ``seq`` ends with (the publish order) against the in-order states."""
        return compare(self.stream, arrival_states(self.stream, self.agent), self.agent)

    @property
    def pipe_failed(self) -> int:
        return sum(int(stats.get("failed", 0)) for stats in self.pipe_stats)

    @property
    def violations(self) -> list[str]:
        """One line per account that did not converge, and one for records the pipe left behind."""
        expected = self.with_seq.expected
        found = [
            f"account {account}: expected {_summary(expected[account])}, "
            f"found {_summary(self.observed.get(account))}"
            for account in self.with_seq.differing
        ]
        if self.pipe_failed:
            found.append(f"the pipe left {self.pipe_failed} record(s) in the staging queue")
        return found

    @property
    def passed(self) -> bool:
        return not self.violations

    def out_of_order_accounts(self) -> list[str]:
        """Accounts whose events were published out of the order they happened in."""
        return [a for a in self.accounts if self.published_versions(a) != sorted(self.published_versions(a))]

    def published_versions(self, account: str) -> list[int]:
        """The account's versions in the order they were published."""
        return [event.version for event in self.stream if event.account_id == account]

    def rows(self) -> Iterator[tuple[str, str, str, str, str]]:
        """Per account: published order, in order, with seq (deployed), without seq (computed)."""
        in_order = self.with_seq.expected
        blind = self.without_seq.observed
        for account in self.accounts:
            yield (
                account,
                " ".join(str(v) for v in self.published_versions(account)),
                _summary(in_order[account]),
                _summary(self.observed.get(account)),
                _summary(blind.get(account)),
            )

    def verdict(self) -> str:
        with_seq, without = self.with_seq, self.without_seq
        lines = [
            f"With seq (deployed, state mode): {with_seq.verdict()}."
            if with_seq.converged
            else f"With seq (deployed, state mode): NOT CONVERGED, {with_seq.verdict()}.",
            f"Without seq (the same stream applied in the order it was delivered): {without.verdict()}"
            + (f": {', '.join(without.wrongly_billed)}." if without.wrongly_billed else "."),
        ]
        return " ".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The JSON report."""
        with_seq, without = self.with_seq, self.without_seq
        return {
            "scenario": "events",
            "passed": self.passed,
            "counts": {
                "accounts": len(self.accounts),
                "events_published": len(self.stream),
                "accounts_out_of_order": len(self.out_of_order_accounts()),
                "pipe_sent": sum(int(s.get("sent", 0)) for s in self.pipe_stats),
                "pipe_failed": self.pipe_failed,
                "converged_with_seq": len(self.accounts) - len(with_seq.differing),
                "diverged_without_seq": len(without.differing),
                "wrongly_billed_without_seq": len(without.wrongly_billed),
            },
            "converged": with_seq.converged,
            "diverged_without_seq": not without.converged,
            "published": [event.event_id for event in self.stream],
            "accounts": {
                account: {
                    "published_versions": self.published_versions(account),
                    "in_order": with_seq.expected[account],
                    "with_seq": self.observed.get(account),
                    "without_seq": without.observed.get(account),
                }
                for account in self.accounts
            },
            "pipe": self.pipe_stats,
            "drain": self.drain_stats,
            "timings_seconds": {
                **self.timings.seconds,
                "total": round(sum(self.timings.seconds.values()), 3),
            },
            "violations": self.violations,
        }

    def write_report(self, path: Path) -> None:
        """Write :meth:`to_dict` as indented JSON, creating the directory."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")


def _summary(state: Mapping[str, Any] | None) -> str:
    if state is None:
        return "-"
    return f"{state.get('status')}, billed {state.get('billed')}, held {state.get('held')}"


def run_events(
    options: DemoOptions, *, say: Reporter = print, accounts: int = DEFAULT_ACCOUNTS
) -> EventsResult:
    """Deploy (unless told not to), publish the shuffled stream, run the pipe, drain, read the accounts.

    Raises
    ------
    DemoError
        The bus refused an event, the stack is not the sample app, or the app directory holds no
        sample job code.
    DeployError, StackNotFoundError, QueueNotFoundError, PipeNotFoundError
        The environment stopped a step.
    """
    timings = Phase()
    agent = load_account_agent(options.app_dir / JOB_CODE_DIR)
    stream = event_stream(accounts, options.spec.seed)
    with steps.connect(options, timings) as target:
        clients = steps.make_clients(target)
        with timings.timed("deploy"):
            steps.prepare(options, target, say=say)
            queue = select_queue(options.stack, find_queues(options.stack, target=target), ACCOUNT_QUEUE)
        if queue.group_table is None:
            raise DemoError(
                f"{queue.describe()} has no state table: the events scenario needs the sample's state-mode "
                f"{ACCOUNT_QUEUE} queue",
                "deploy the sample app (app.py), or pass --stack naming a stack built from it",
            )
        with timings.timed("publish"):
            say(
                f"publishing {len(stream)} account events of {accounts} accounts, shuffled, on bus "
                f"{ACCOUNT_EVENT_BUS} ..."
            )
            publish(stream, events_client=target.client("events"))
        with timings.timed("pipe"):
            runners = PipeRunner.from_stack(options.stack, target=target)
            names = ", ".join(runner.pipe.name for runner in runners)
            say(f"running the pipe {names} until its staging queue is empty ...")
            pipe_stats = [runner.run(until_empty=True, say=say).as_dict() for runner in runners]
        with timings.timed("drain"):
            say(f"draining {queue.label} through the function's handler ...")
            drain_stats = steps.drain(queue, target=target, say=say)
        with timings.timed("verify"):
            say("reading every account's state ...")
            observed = read_states(
                sorted({e.account_id for e in stream}),
                group_table=queue.group_table,
                dynamodb_client=clients.dynamodb,
            )
    result = EventsResult(stream, observed, agent, pipe_stats, drain_stats, timings)
    if options.report is not None:
        result.write_report(options.report)
    return result
