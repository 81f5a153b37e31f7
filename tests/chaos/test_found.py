"""What the chaos suite found, each kept as a regular example (played step by step, no Hypothesis).

1. **A resumed group's wake-up message was dead-lettered by SQS** when the replay of its kept jobs
   crashed the worker a few times in a row (found by ``test_claim_mode_...``: PARK, batch size 1,
   ``max_attempts`` 3, kept jobs that crash their worker; SQS's rule at the least allowed value, 6).
   The wake-up was replaced by a fresh one only at the end of a batch, which a crashed invocation
   never reaches, so every crash of the replay cost it a receive, and the group was left RESUMING
   with no trigger and its last kept job never run. Fixed: a worn wake-up is replaced before
   anything runs.
2. **Claim mode: a job that succeeded could be declared dead over its success** (found by
   ``make chaos``: PARK, ``max_attempts`` 2, a worker crashed after a claim, then another worker took
   it over, ran past its lease, and committed SUCCEEDED while a third worker, which had found the
   claim expired with no attempts left, declared the job dead). The DEAD write was fenced on the
   owner token only, and the token was still the succeeding worker's, so DEAD overwrote SUCCEEDED;
   under PARK the operator's resume then ran the job again, under CONTINUE a job that succeeded was
   dead-lettered. Fixed: every fenced write also requires the claim to be IN_FLIGHT or FAILED (a
   SUCCEEDED or DEAD claim is final).
3. **State mode: a dead job whose dead-letter send failed once reaches the DLQ as a copy** (found
   by ``test_state_mode_...``: CONTINUE, a permanent job, the DLQ ``SendMessage`` throttled). Its
   redelivery is ``DEAD_COPY`` (the bookkeeping keeps dead job ids only), so the only DLQ message of
   the job says ``COPY_OF_DEAD_JOB`` and loses its reason and error; claim mode keeps them (it
   compares the message id). Fixed: the bookkeeping keeps each remembered dead job's entry (reason,
   error type, error, attempts, message id; 16 KB at most), and a redelivery of the message it died in
   is dead-lettered as it died; a copy in another message is still ``COPY_OF_DEAD_JOB``.
4. **State mode: a transition that crashes its worker every time is never dead** (found while
   setting the suite's SQS rule: a crash is not an attempt in state mode, as it is in claim mode), so
   SQS's ``maxReceiveCount`` dead-letters its whole batch, healthy jobs on both sides of it included.
   Fixed: a redelivered group writes a run marker before its transitions; a marker found means a
   crash, and the group's next runs mark each transition, so the crashing job's attempts are counted
   and it dies of them alone (``runtime/state/crash_watch.py``). The chaos state world no longer treats a
   crash as a disturbance.
5. **State mode: a buffered job dead-lettered before a commit that crashed is applied later** (found
   by ``make chaos``, 150 examples: CONTINUE, a ``seq`` job waiting in the
   reorder buffer failed its last attempt when the gap closed, was sent to the dead-letter queue
   before the commit, as it has no record to report, and the worker crashed before the commit; the
   next run retried it from the uncommitted count and it succeeded: dead-lettered and applied). Fixed:
   the commit records it dead and owed first, then it is sent, and what is owed is cleared once sent
   (``OwedLetters`` in ``runtime/state/outcomes.py``); a failed send or a crash leaves it owed, sent
   again by the group's next run (same deduplication id). Kept as regular examples in
   ``tests/functional/test_runtime_state_processor.py``.
6. **Claim mode: the least ``maxReceiveCount`` was one receive short** (found while fixing 4: the
   same world in claim mode at batch size 1 and ``max_attempts`` 6). A job that crashes its worker on
   every attempt is dead only on the receive after its last run, so at ``(2 x batch_size - 1) x
   max_attempts`` SQS dead-lettered it itself (no triage attributes; under PARK its group went on
   past it). Fixed: the least value is ``(2 x batch_size - 1) x max_attempts + 1`` (96 for the
   defaults, default 192).
7. **Under AWS's FIFO rule, a malformed record kept in a parked group can be kept twice** (found by
   ``make chaos`` at 300 examples, in ``test_park_policy_...`` of the model tests once their queue
   refused deletes with expired receipt handles: PARK, a slow invocation that started after its
   batch's visibility timeout ended). The records of a parked group are kept in the group table, then
   the mapping's delete is refused; SQS delivers them again and they are kept a second time. A job
   with a job id is harmless (its second copy is a duplicate of its claim or of the state's
   bookkeeping), but a malformed body has no job id: the operator skips it once per copy (the
   dead-letter queue's deduplication, keyed by the source message, drops the second send within 5
   minutes). No loss and no order broken, so the runtime was left unchanged then; ``make chaos`` at
   1,000 schedules then found a group of five malformed records kept again on every refused delete
   that took 102 resumes to empty. Fixed: the park header remembers the message ids of the group's
   last 20 kept records (``KEPT_RECENT_MESSAGE_IDS``), and a record of one of them is not kept
   again (outcome ``DUPLICATE``); the model tests expect one skip per *message*.
8. **State mode: a stale worker's run marker was overwritten by its successor's** (found by
   ``make chaos`` at 1,000 schedules: CONTINUE, ``max_attempts`` 2, visibility = timeout, a permanent
   job P before a job C that crashes its worker). An isolated run marks each transition with an
   ``UpdateItem`` conditioned on the version, which it left unchanged; a worker that had read the
   group before a stale worker's mark of C (its batch received again) wrote P's next marker over the
   same version, and it was accepted: C's crash went uncounted, and when that worker's own mark of C
   was throttled, P was blamed for a run that had returned and died ``ATTEMPTS_EXHAUSTED`` instead of
   ``PERMANENT``. Fixed: every marker write is fenced (by the run item's token), so the successor's
   marker is refused and it retries from the state that names C.
9. **State mode: a cancelled job that brings its group back for a failed buffered job fails its whole
   batch** (found by ``make chaos`` at 200 schedules, in the steering property: CONTINUE, a group whose
   ``seq`` 1 and 2 wait in the reorder buffer for ``seq`` 0, which an operator cancelled before it
   was sent; ``seq`` 2 fails once). When ``seq`` 0 arrives its place closes, 1 is applied, 2 fails,
   and ``seq`` 0's record is the carrier that brings the group back for 2. Its outcome line passed
   the carrier's ``action`` beside the cancelled line's own, a ``TypeError`` escaped ``process()``:
   the batch failed after its commit, every time the record came back, until SQS's own
   ``maxReceiveCount`` dead-lettered it. Fixed: the cancelled line takes the carrier's fields, its
   ``action`` saying both (not applied, cancelled; retried to bring the group back).
10. **Workers: an alone run's end went uncounted when its isolate landed after a retaker's read**
    (found by ``make chaos`` at 200 schedules, in the worker property: three slots, visibility =
    timeout). A slot retook a job after a crash (shared, to run alone) and sent its isolate while
    its lease was live; the request landed after the lease ran out (the condition compares the
    caller's ``now``, taken before the pause), after another worker had read the claim as a shared
    run's that ran out. That worker's retake, conditioned on the owner and status only, succeeded
    and did not count the alone run. Fixed: the retake is also conditioned on the ``shared`` mark
    it read, so it fails and reads again (rule 3 of ``runtime/claim/store.py``).
11. **Claim mode: a job that died while its live group was cancelled was dropped** (found by the
    steering property's live group cancel: PARK, one worker, no faults, a transient job failing its
    last attempt). The operator's ``CANCELLING`` header landed between the batch's read and its park,
    so the park was refused and the record came back; the cancel then found its claim ``DEAD`` and
    deleted the record as a duplicate: dead, nothing kept, nothing dead-lettered. Fixed: a record
    before the marker whose claim is ``DEAD`` goes to the dead-letter queue with the reason its claim
    stores (``runtime/claim/group_cancel.py``). Kept as a regular example in
    ``tests/functional/test_client_steering.py`` (``..._dies_while_its_live_group_is_cancelled_...``).
    Reading the fix again found its twin: a malformed record with a job id (its claim marked ``DEAD``,
    its park refused the same way) failed the dead-letter path on every batch (it parsed the body);
    it goes as ``MALFORMED`` now (``..._malformed_record_whose_park_a_live_cancel_refused_...``).
12. **State mode: a released group that kept a malformed record under CONTINUE never finished its
    replay** (found by the state-mode newest-wins property: CONTINUE, a hold, a malformed record
    kept, a release). A kept record that dies stays kept until the next page finds its death in the
    state (``DEAD_COPY``) and sends it; a malformed record's death is never in the state, so every
    page found it ``DEAD`` again and the replay wrote page after page until the function's time ran
    out, on every wake-up. Fixed: a kept malformed record is sent in its own page, before the commit
    (safe: it can never apply) (``runtime/state/replay.py``). Kept as a regular example in
    ``tests/functional/test_client_steering.py`` (``..._dead_letters_its_kept_malformed_record_...``).
13. **State mode: a released or resumed group's replay was not paced** (found by the pace property,
    ``test_pace_chaos.py``, at its first 30 schedules: CONTINUE, one job per 30 s per group, burst 1,
    no faults; an operator held ``ws#0`` before its job arrived, a crash job in ``ws#1``, both groups
    held and released). A held (or parked) group keeps its records without taking their tokens, and
    the replay on release applied them all at once with none ("its kept jobs were paced when they
    arrived", the docs said: not a held group's), so a key ran faster than its limit by as many jobs
    as the group had kept. Fixed: the replay takes a page's tokens before the page runs and cuts it at
    the first kept job without one; the wake-up message comes back when the token is due
    (``runtime/state/replay.py``, rule 5). Kept as a regular example in
    ``tests/functional/test_runtime_steering_pace.py`` (``..._released_group_takes_its_kept_jobs_...``).
14. **State mode: a live group's cancel reported an applied job cancelled** (found by the state-mode
    newest-wins property at 60 schedules: PARK, a job applied, a copy of it sent after SQS's five
    minutes, then a live group cancel). Every job id before the marker was entered as cancelled,
    the applied job's copy too, so ``JobOutcomes`` read ``cancelled`` for a job whose effect was
    committed (the log was right: the copy was not applied again). Fixed: the one-job rules decide
    (``decide_state_cancel``): an applied or dead job is never entered; its copy is the core's
    duplicate, or dead copy, as anywhere else (``runtime/state/group_cancel.py``). Kept as a regular
    example in ``tests/functional/test_client_steering.py``
    (``..._applied_job_applied_when_its_late_copy_...``).
"""

from __future__ import annotations

import pytest
from moto import mock_aws

from constructs_fifo.runtime.constants import DeadJobPolicy

from . import state_invariants, steering_invariants, worker_invariants
from .claim_world import ClaimWorld
from .faults import Fault
from .state_world import StateWorld
from .steering_world import SteeredStateWorld
from .worker_world import WorkerWorld
from .workload import JobSpec, Send, Workload
from .world import ChaosWorld, WorldConfig


def _workload(*specs: JobSpec) -> Workload:
    return Workload(specs, tuple(Send(spec, spec.job_id) for spec in specs))


@pytest.mark.parametrize("world_class", [ClaimWorld, StateWorld], ids=["claim", "state"])
def test_a_replay_that_crashes_its_worker_again_and_again_keeps_its_wake_up_message(
    world_class: type[ChaosWorld],
) -> None:
    with mock_aws():
        # GIVEN group ws#1 parked at P (permanent), with three kept jobs that each crash their worker
        # twice, batch size 1 and max_attempts 3 (SQS's rule at the least allowed value: 6 receives)
        specs = [JobSpec("P", "ws#1", "permanent")] + [JobSpec(f"K{i}", "ws#1", "crash", 2) for i in range(3)]
        config = WorldConfig(policy=DeadJobPolicy.PARK, batch_size=1, max_attempts=3)
        world = world_class(config, _workload(*specs))
        try:
            world.settle()
            assert world.parked_groups() == ["ws#1"]
            # WHEN an operator fixes P and resumes the group, and the queue drains
            world.resume("ws#1")
            world.settle()
            # THEN SQS dead-lettered nothing, no group is parked or resuming, and every job is done
            assert world.sqs_dead() == []
            assert world.operators().list_groups() == []
            done = {run.job_id for run in world.history.runs if run.completed}
            assert done == {"P", "K0", "K1", "K2"}
        finally:
            world.close()


def test_a_job_that_succeeded_past_its_lease_is_not_declared_dead_by_a_worker_that_found_it_exhausted() -> (
    None
):
    with mock_aws():
        # GIVEN max_attempts 1 and worker A running job j under its claim; A's lease and j's
        # visibility expire, and worker B receives j again, finds the claim expired with no attempts
        # left, and is about to declare j dead (fenced on A's owner token)
        world = ClaimWorld(
            WorldConfig(max_attempts=1, timeout_s=20, visibility_s=120), _workload(JobSpec("j", "ws#1"))
        )
        try:
            world.send_next()
            stale = world.invoke()
            assert stale is not None
            world.advance(stale, "job.start")
            world.clock.advance(121)
            exhausting = world.invoke()
            assert exhausting is not None
            world.advance(exhausting, "dynamodb.UpdateItem", "claims")
            # WHEN A finishes j and commits SUCCEEDED, then B writes DEAD
            world.finish(stale)
            assert world.claim_status("j") == "SUCCEEDED"
            world.finish(exhausting)
            # THEN B's write was refused: j stays SUCCEEDED, is not dead-lettered, and ran once
            assert world.claim_status("j") == "SUCCEEDED"
            world.settle()
            assert world.dead_letters() == []
            assert [run.worker for run in world.history.runs_of("j") if run.completed] == [stale.name]
        finally:
            world.close()


def test_state_mode_a_dead_job_whose_dead_letter_send_failed_once_keeps_its_reason() -> None:
    with mock_aws():
        # GIVEN state mode under CONTINUE and a permanent job P, whose first dead-letter send is throttled
        world = StateWorld(WorldConfig(), _workload(JobSpec("P", "ws#1", "permanent")))
        try:
            world.send_next()
            worker = world.invoke()
            assert worker is not None
            world.advance(worker, "sqs.SendMessage", "dlq")
            world.step(worker, Fault.THROTTLING)
            # WHEN the record comes back and the queue drains
            world.settle()
            # THEN the dead-letter queue holds P once, with the reason it died for
            assert world.dead_letters() == [("P", "PERMANENT")]
        finally:
            world.close()


@pytest.mark.parametrize(("batch_size", "max_attempts"), [(10, 3), (1, 3), (1, 4)])
def test_state_mode_a_transition_that_always_crashes_drags_no_healthy_job_into_the_dlq(
    batch_size: int, max_attempts: int
) -> None:
    with mock_aws():
        # GIVEN group ws#1 = [h1, C, h2], C's transition crashing its worker every time, and SQS's rule
        # at state mode's least value (batch size 1: C's own max_attempts + 3 receives, no more)
        specs = (JobSpec("h1", "ws#1"), JobSpec("C", "ws#1", "crash", 10_000), JobSpec("h2", "ws#1"))
        config = WorldConfig(max_attempts=max_attempts, batch_size=batch_size)
        world = StateWorld(config, _workload(*specs))
        try:
            # WHEN the queue drains
            world.settle(max_steps=20_000)
            # THEN SQS dead-lettered nothing: C died of its own attempts, h1 and h2 were applied
            assert world.sqs_dead() == []
            assert world.committed_log("ws#1") == ["h1", "h2"]
            assert world.dead_letters() == [("C", "ATTEMPTS_EXHAUSTED")]
        finally:
            world.close()


@pytest.mark.parametrize(("batch_size", "max_attempts"), [(10, 3), (1, 3), (1, 6)])
def test_claim_mode_a_job_that_always_crashes_dies_before_sqs_counts_out_its_receives(
    batch_size: int, max_attempts: int
) -> None:
    with mock_aws():
        # GIVEN group ws#1 = [h1, C, h2], C crashing its worker every time, and SQS's rule at claim
        # mode's least value (batch size 1: C's max_attempts runs and the receive in which it is dead)
        specs = (JobSpec("h1", "ws#1"), JobSpec("C", "ws#1", "crash", 10_000), JobSpec("h2", "ws#1"))
        world = ClaimWorld(WorldConfig(max_attempts=max_attempts, batch_size=batch_size), _workload(*specs))
        try:
            # WHEN the queue drains
            world.settle(max_steps=20_000)
            # THEN SQS dead-lettered nothing: C died of its own attempts, h1 and h2 ran to completion
            assert world.sqs_dead() == []
            assert world.dead_letters() == [("C", "ATTEMPTS_EXHAUSTED")]
            for job_id in ("h1", "h2"):
                assert any(run.completed for run in world.history.runs_of(job_id))
        finally:
            world.close()


def test_a_malformed_record_delivered_again_after_its_delete_was_refused_is_kept_and_skipped_once() -> None:
    with mock_aws():
        # GIVEN PARK, visibility timeout = function timeout = 20 s, and group ws#1 = [P (permanent),
        # M (malformed)], received by a worker whose function started 10 s after the receive
        config = WorldConfig(policy=DeadJobPolicy.PARK, timeout_s=20, visibility_s=20)
        world = ClaimWorld(
            config, _workload(JobSpec("P", "ws#1", "permanent"), JobSpec("M", "ws#1", "malformed"))
        )
        try:
            world.send_next()
            world.send_next()
            late = world.invoke(poller_delay_s=10)
            assert late is not None
            # WHEN the visibility timeout ends while it parks the group at P and keeps P and M, so the
            # mapping's delete is refused and SQS delivers both again
            world.clock.advance(21)
            world.finish(late)
            assert world.history.events["deletes refused (receipt handle expired)"] == 2
            world.settle()
            # THEN the group is parked with P and M kept once each, in order
            assert world.kept_job_ids("ws#1") == ["P", "M"]
            # AND once operators resume it (retrying P, then skipping M), P ran once and M was skipped
            # once; the dead-letter queue holds M once
            world.resume_all()
            assert [run.job_id for run in world.history.runs if run.completed] == ["P"]
            assert world.skipped == ["M"]
            assert [job_id for job_id, _ in world.dead_letters()] == ["M"]
        finally:
            world.close()


def test_state_mode_a_stale_workers_mark_is_not_overwritten_by_its_successors_marker() -> None:
    with mock_aws():
        # GIVEN state mode under CONTINUE, max_attempts 2, visibility = timeout = 20 s, and group
        # ws#1 = [P (permanent), C (crashes its worker on its first three runs)]; two deliveries crashed
        # on C, the second leaving a group marker, so the group's runs are isolated
        config = WorldConfig(max_attempts=2, timeout_s=20, visibility_s=20)
        world = StateWorld(
            config, _workload(JobSpec("P", "ws#1", "permanent"), JobSpec("C", "ws#1", "crash", 3))
        )
        try:
            world.send_next()
            world.send_next()
            for _ in range(2):
                crashed = world.invoke()
                assert crashed is not None
                world.finish(crashed)
                world.clock.advance(21)
            # AND worker A marked P (attempt 1), ran it, and is about to mark C when its visibility
            # ends; worker B receives the batch again and reads the group (P's marker)
            stale = world.invoke()
            assert stale is not None
            world.advance(stale, "dynamodb.PutItem", "groups")
            world.step(stale)
            world.advance(stale, "dynamodb.PutItem", "groups")
            world.clock.advance(21)
            successor = world.invoke()
            assert successor is not None
            world.advance(successor, "dynamodb.PutItem", "groups")
            # WHEN A marks C and crashes on it, then B writes P's next marker over the group it read,
            # runs P, and its mark of C (its second marker write) is throttled
            world.finish(stale)
            marks = 0
            while not successor.finished:
                point = successor.point
                marking = point is not None and point.label == "dynamodb.PutItem" and "groups" in point.target
                marks += marking
                world.step(successor, Fault.THROTTLING if marking and marks == 2 else None)
            world.settle()
            # THEN B's marker was refused (A's mark had changed the run item's token), so C's crash was
            # counted and P was never blamed for a run that returned: P died of its permanent error, C
            # was applied
            assert world.dead_letters() == [("P", "PERMANENT")]
            assert world.committed_log("ws#1") == ["C"]
            assert world.sqs_dead() == []
        finally:
            world.close()


def test_state_mode_a_cancelled_job_carrying_its_group_back_for_a_failed_buffered_job_ends_its_batch() -> (
    None
):
    with mock_aws():
        # GIVEN state mode, group ws#1 whose seq 1 and 2 (2 fails once) wait in the reorder buffer for
        # seq 0, which an operator cancelled before it was sent
        specs = (
            JobSpec("j0", "ws#1", seq=0),
            JobSpec("j1", "ws#1", seq=1),
            JobSpec("j2", "ws#1", "transient", 1, seq=2),
        )
        world = SteeredStateWorld(
            WorldConfig(), Workload(specs, tuple(Send(s, s.job_id) for s in specs[1:] + specs[:1]))
        )
        try:
            world.cancel("j0")
            world.send_next()
            world.send_next()
            buffering = world.invoke()
            assert buffering is not None
            world.finish(buffering)
            assert world.buffered_job_ids("ws#1") == ["j1", "j2"]
            # WHEN seq 0 arrives: its place closes, j1 is applied, j2 fails, and j0's record carries the
            # group back for j2
            world.send_next()
            world.settle()
            # THEN nothing escaped the processor, SQS dead-lettered nothing, j1 and j2 were applied in
            # order, j0 never was, and every invariant holds
            assert world.history.escaped == []
            assert world.sqs_dead() == []
            assert world.committed_log("ws#1") == ["j1", "j2"]
            assert state_invariants.check(world) + steering_invariants.check(world) == []
        finally:
            world.close()


def test_workers_a_retake_read_before_an_isolate_lands_counts_the_alone_run() -> None:
    with mock_aws():
        # GIVEN job j retaken after a crash by a slot of process p2 (to run alone), whose isolate is sent
        # while its lease is live and waits in flight past the lease (visibility = timeout = 20 s)
        config = WorldConfig(max_attempts=3, timeout_s=20, visibility_s=20, max_workers=3, slots=2)
        world = WorkerWorld(config, _workload(JobSpec("j", "ws#1")))
        try:
            world.send_next()
            first = world.start(world.new_process())
            assert first is not None
            world.advance(first, "job.start")
            world.kill(world.processes[0], "killed")
            world.clock.advance(21)
            holder = world.start(world.new_process())
            assert holder is not None
            world.advance(holder, "dynamodb.UpdateItem", "claims")
            world.clock.advance(32)
            # AND a slot of p3 reads the claim (a shared run's, its lease ran out) and is about to retake it
            retaker = world.start(world.new_process())
            assert retaker is not None
            world.advance(retaker, "dynamodb.PutItem", "claims")
            world.step(retaker)
            # WHEN the isolate lands, then the retake is sent
            world.step(holder)
            world.step(retaker)
            world.settle()
            # THEN the retake counted the alone run (it read the claim again), and every invariant holds
            assert worker_invariants.retakes(world) == []
            assert worker_invariants.check(world) == []
        finally:
            world.close()
