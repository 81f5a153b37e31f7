"""The consumer's props: which consumer runs the jobs, and what cannot work with it.

With ``consumer=ContainerConsumer(...)``:

- the Lambda function's props (their rows say ``lambda_only``: ``timeout``, ``memory_size``,
  ``reserved_concurrency``, ``max_concurrency``, ``tracing``, ``layers``, ``bundling``,
  ``provisioned_pollers``) are refused
  when they differ from their defaults: there is no function, and a prop that silently does nothing
  is a setting someone believes in;
- a state-mode queue is refused: a transition is short and pure, the Lambda function runs it, and a
  long one would hold its group's later transitions (and the sequence gap's clock) behind it; a long
  effect runs in a claim-mode container queue whose job enqueues the transition to a state-mode queue;
- ``heartbeat_interval`` must be below ``visibility_timeout / 2``, so a late or retried renewal still
  lands while the records are hidden;
- ``slots x max_tasks x batch_size`` may not pass what one FIFO queue holds in flight (120,000), and
  ``slots x max_tasks`` above the ``expected_groups`` hint warns (a FIFO queue runs one job per group
  at a time: the slots past the groups never run anything);
- the task's size is a Fargate combination, its storage 21–200 GiB;
- ``min_tasks`` is 0 to ``max_tasks``; ``capacity`` is a ``FargateCapacity`` of weights 0–1000 (not both
  0) and an on-demand base of at most ``max_tasks``, with Spot only for x86_64 tasks (Fargate Spot runs no
  ARM64 task); ``shared_storage`` is a ``SharedStorage`` mounted at an absolute path other than ``/``,
  on a given file system or access point, not both.

Without it (the Lambda consumer) the workers' props (``container_only`` rows) are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from aws_cdk import Annotations, Duration
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_lambda as lambda_
from constructs import IConstruct

from constructs_fifo.construct.checks.limits import fmt_seconds, resolved_number
from constructs_fifo.construct.resources.containers import ContainerConsumer, FargateCapacity
from constructs_fifo.construct.resources.shared_storage import SharedStorage
from constructs_fifo.construct.settings import defaults, tokens
from constructs_fifo.runtime.aws_limits import SQS_FIFO_MAX_IN_FLIGHT_MESSAGES
from constructs_fifo.runtime.settings.choices import JobMode
from constructs_fifo.runtime.settings.spec import SECONDS, SETTINGS

__all__ = [
    "FARGATE_MEMORY_MIB",
    "WARNING_SLOTS_BEYOND_GROUPS",
    "check_consumer",
    "warn_container",
]

#: The warning id of slots the expected groups cannot fill, for ``Validations.of(scope).acknowledge``.
WARNING_SLOTS_BEYOND_GROUPS: Final = "constructs-fifo:slotsBeyondGroups"
#: Fargate's task sizes (ECS task definition parameters): memory (MiB) allowed per CPU units.
FARGATE_MEMORY_MIB: Final[Mapping[int, range]] = {
    256: range(512, 2049, 512),
    512: range(1024, 4097, 1024),
    1024: range(2048, 8193, 1024),
    2048: range(4096, 16385, 1024),
    4096: range(8192, 30721, 1024),
    8192: range(16384, 61441, 4096),
    16384: range(32768, 122881, 8192),
}
#: What to do instead of each Lambda-only prop, with the container consumer.
_INSTEAD: Final = {
    "timeout": "a run's bound is max_job_duration",
    "memory_size": "a task's size is ContainerConsumer's cpu and memory_mib",
    "reserved_concurrency": "the workers' ceiling is ContainerConsumer's max_tasks x slots",
    "max_concurrency": "the workers' ceiling is ContainerConsumer's max_tasks x slots",
    "tracing": "instrument the image",
    "layers": "install what the job needs in the image",
    "bundling": "install the job's dependencies in the image",
    "provisioned_pollers": "the workers poll the queue themselves; ContainerConsumer's min_tasks keeps "
    "tasks ready",
}


def _seconds(value: object) -> float | None:
    return tokens.seconds(value) if isinstance(value, Duration) else None


def _given(name: str, value: object) -> bool:
    """Whether a Lambda-only prop was set to something else than its default (``None`` is never)."""
    row = SETTINGS[name]
    if value is None:
        return False
    if row.unit == SECONDS:
        return _seconds(value) not in (None, row.default)
    if isinstance(value, int | float) and not isinstance(value, bool) and not resolved_number(value):
        return False  # a token: unknown until deploy
    return value != row.default


def _check_lambda_props(given: Mapping[str, object]) -> list[str]:
    return [
        f"{name}={given[name]!r} is a setting of the Lambda function and does nothing with "
        f"consumer=ContainerConsumer(...): remove {name} ({_INSTEAD[name]})."
        for name, row in SETTINGS.items()
        if row.lambda_only and name in given and _given(name, given[name])
    ]


def _check_size(consumer: ContainerConsumer) -> list[str]:
    problems: list[str] = []
    cpu, memory = consumer.cpu, consumer.memory_mib
    if resolved_number(cpu) and resolved_number(memory):
        allowed = FARGATE_MEMORY_MIB.get(int(cpu))
        if allowed is None:
            problems.append(
                f"consumer.cpu={cpu!r} is not a Fargate task size: pass one of "
                f"{', '.join(map(str, FARGATE_MEMORY_MIB))} CPU units (1024 = 1 vCPU)."
            )
        elif memory not in allowed:
            problems.append(
                f"consumer.memory_mib={memory!r} does not go with cpu={cpu}: Fargate allows "
                f"{allowed.start}–{allowed.stop - 1} MiB in steps of {allowed.step} with it; pass a "
                "memory_mib in that range, or another cpu."
            )
    storage = consumer.ephemeral_storage_gib
    low, high = defaults.EPHEMERAL_STORAGE_MIN_GIB, defaults.EPHEMERAL_STORAGE_MAX_GIB
    if resolved_number(storage) and not low <= storage <= high:
        problems.append(
            f"consumer.ephemeral_storage_gib={storage!r} is outside Fargate's {low}–{high} GiB; pass a "
            "size in that range, or None for Fargate's 20 GiB."
        )
    return problems


def _check_scale(consumer: ContainerConsumer, slots: int | float, batch_size: int | float) -> list[str]:
    problems: list[str] = []
    for name in ("max_tasks", "expected_groups"):
        value = getattr(consumer, name)
        if value is not None and resolved_number(value) and (not isinstance(value, int) or value < 1):
            problems.append(f"consumer.{name}={value!r} is not a whole number >= 1; pass e.g. {name}=4.")
    tasks = consumer.max_tasks
    if not problems and resolved_number(tasks) and resolved_number(slots) and resolved_number(batch_size):
        in_flight = int(tasks) * int(slots) * int(batch_size)
        if in_flight > SQS_FIFO_MAX_IN_FLIGHT_MESSAGES:
            problems.append(
                f"consumer.max_tasks={tasks} x slots={slots:g} x batch_size={batch_size:g} = {in_flight} "
                f"messages in flight, more than the {SQS_FIFO_MAX_IN_FLIGHT_MESSAGES} one FIFO queue holds: "
                "receives past it return nothing; lower max_tasks, slots or batch_size."
            )
    return problems


#: An ECS capacity provider strategy's largest weight.
_WEIGHT_MAX: Final = 1000


def _whole(value: object, low: int, high: float) -> bool:
    """``value`` is a whole number from ``low`` to ``high`` (a token is taken as one)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return not resolved_number(value) or (float(value).is_integer() and low <= value <= high)


def _check_floor_and_capacity(consumer: ContainerConsumer, architecture: object) -> list[str]:
    problems: list[str] = []
    tasks = consumer.max_tasks if resolved_number(consumer.max_tasks) else float("inf")
    if not _whole(consumer.min_tasks, 0, tasks):
        problems.append(
            f"consumer.min_tasks={consumer.min_tasks!r} is not a whole number from 0 to max_tasks="
            f"{consumer.max_tasks!r}: it is the tasks kept running when the queue is empty; pass e.g. "
            "min_tasks=1, or raise max_tasks."
        )
    capacity = consumer.capacity
    if capacity is None:
        return problems
    if not isinstance(capacity, FargateCapacity):
        return [
            *problems,
            f"consumer.capacity={capacity!r} is not a FargateCapacity: pass capacity=FargateCapacity() for "
            "Fargate Spot alone, FargateCapacity(on_demand_base=1, on_demand_weight=1, spot_weight=3) for a "
            "mix, or None for on-demand Fargate.",
        ]
    weights = (("spot_weight", capacity.spot_weight), ("on_demand_weight", capacity.on_demand_weight))
    for name, weight in weights:
        if not _whole(weight, 0, _WEIGHT_MAX):
            problems.append(
                f"consumer.capacity.{name}={weight!r} is not a whole number from 0 to {_WEIGHT_MAX}: ECS "
                f"weighs capacity providers 0 to {_WEIGHT_MAX}; pass e.g. {name}=1."
            )
    if all(isinstance(w, int | float) and resolved_number(w) and w == 0 for _, w in weights):
        problems.append(
            "consumer.capacity has spot_weight=0 and on_demand_weight=0: ECS places no task beyond the base "
            "with both weights 0; pass spot_weight >= 1 (Spot) or on_demand_weight >= 1, or capacity=None."
        )
    if not _whole(capacity.on_demand_base, 0, tasks):
        problems.append(
            f"consumer.capacity.on_demand_base={capacity.on_demand_base!r} is not a whole number from 0 to "
            f"max_tasks={consumer.max_tasks!r}: it is how many tasks run on demand before the weights apply; "
            "pass a base up to max_tasks."
        )
    arm = getattr(architecture, "name", None) == lambda_.Architecture.ARM_64.name
    if arm and capacity.spot_weight:
        problems.append(
            f"consumer.capacity.spot_weight={capacity.spot_weight!r} with architecture=ARM_64: Fargate Spot "
            "runs x86_64 Linux tasks only, so these tasks would never be placed on Spot; pass "
            "architecture=lambda_.Architecture.X86_64 (and an x86_64 image), or spot_weight=0."
        )
    return problems


def _check_shared_storage(storage: object) -> list[str]:
    if storage is None:
        return []
    if not isinstance(storage, SharedStorage):
        return [
            f"consumer.shared_storage={storage!r} is not a SharedStorage: pass shared_storage="
            "SharedStorage(path='/mnt/shared') for an encrypted file system of its own, or None."
        ]
    problems: list[str] = []
    path = storage.path
    if not isinstance(path, str) or not path.startswith("/") or path.rstrip("/") == "" or ".." in path:
        problems.append(
            f"consumer.shared_storage.path={path!r} is not an absolute directory other than '/': every task "
            "mounts the file system there; pass e.g. path='/mnt/shared'."
        )
    if storage.file_system is not None and storage.access_point is not None:
        problems.append(
            "consumer.shared_storage has both file_system and access_point: an access point names its file "
            "system; pass access_point alone (or file_system alone, for an access point of its own)."
        )
    for name in ("uid", "gid"):
        if not _whole(getattr(storage, name), 0, 2**32 - 1):
            problems.append(
                f"consumer.shared_storage.{name}={getattr(storage, name)!r} is not a POSIX id (a whole "
                f"number from 0); pass e.g. {name}=1000."
            )
    return problems


def _check_heartbeat(values: Mapping[str, object]) -> list[str]:
    heartbeat = _seconds(values.get("heartbeat_interval") or defaults.HEARTBEAT_INTERVAL)
    visibility = _seconds(values.get("visibility_timeout"))
    per = defaults.HEARTBEATS_PER_VISIBILITY_TIMEOUT
    if heartbeat is None or visibility is None or heartbeat * per < visibility:
        return []
    return [
        f"heartbeat_interval={fmt_seconds(heartbeat)} is not below visibility_timeout / {per} "
        f"({fmt_seconds(visibility)} / {per}): a renewal that comes late or is retried once would land "
        "after the records became visible again, and a second worker would start the job; pass "
        f"heartbeat_interval < {fmt_seconds(visibility / per)} or a longer visibility_timeout."
    ]


def check_consumer(given: Mapping[str, object], values: Mapping[str, object]) -> list[str]:
    """Every problem of the consumer's props.

    Parameters
    ----------
    given
        Every prop as given (the Lambda-only props' defaults are told from values given).
    values
        The props of their rows' types, dependent defaults filled in.

    Returns
    -------
    list of str
        One message per problem, naming the prop, its value, the rule and the fix.
    """
    consumer = given.get("consumer")
    if consumer is None:
        return [
            f"{name} is a setting of the container workers and does nothing with the Lambda function: "
            f"remove {name}, or pass consumer=ContainerConsumer(image=...) to run the jobs in containers."
            for name, row in SETTINGS.items()
            if row.container_only and given.get(name) is not None
        ]
    if not isinstance(consumer, ContainerConsumer):
        return [
            f"consumer={consumer!r} is a {type(consumer).__name__}: consumer must be a ContainerConsumer "
            "or None; pass consumer=ContainerConsumer(image=ecs.ContainerImage.from_registry(...)), or omit "
            "it for the Lambda function."
        ]
    problems: list[str] = []
    if not isinstance(consumer.image, ecs.ContainerImage):
        problems.append(
            f"consumer.image={consumer.image!r} is not an ecs.ContainerImage; pass e.g. "
            "image=ecs.ContainerImage.from_registry('registry/agent-worker:1')."
        )
    problems += _check_lambda_props(given)
    if values.get("mode") in (JobMode.STATE, JobMode.STATE.value):
        problems.append(
            "mode=JobMode.STATE with consumer=ContainerConsumer(...) cannot hold its promise: a transition "
            "apply(job, state) is short and pure (the Lambda function runs it), and a long one holds its "
            "group's later transitions and the sequence gap's clock behind it; run the long effect in a "
            "claim-mode container queue whose job enqueues the transition to a state-mode queue "
            '("Container workers" in docs/construct.md), or omit consumer.'
        )
    problems += _check_size(consumer)
    slots = values.get("slots") or defaults.SLOTS
    batch_size = values.get("batch_size", defaults.BATCH_SIZE)
    if isinstance(slots, int | float) and isinstance(batch_size, int | float):
        problems += _check_scale(consumer, slots, batch_size)
    problems += _check_heartbeat(values)
    problems += _check_floor_and_capacity(consumer, values.get("architecture"))
    problems += _check_shared_storage(consumer.shared_storage)
    return problems


def warn_container(scope: IConstruct, consumer: ContainerConsumer, slots: int) -> None:
    """Warn when the expected groups cannot fill slots x max_tasks (:data:`WARNING_SLOTS_BEYOND_GROUPS`)."""
    groups, tasks = consumer.expected_groups, consumer.max_tasks
    if groups is None or not (resolved_number(groups) and resolved_number(tasks)) or slots * tasks <= groups:
        return
    most = -(-groups // slots)
    Annotations.of(scope).add_warning_v2(
        WARNING_SLOTS_BEYOND_GROUPS,
        f"slots={slots} x consumer.max_tasks={tasks} = {slots * tasks} slots, but expected_groups={groups}: "
        "a FIFO queue runs one job per group at a time, so at most that many slots ever run; scaling stops "
        f"at {most} task{'' if most == 1 else 's'}; lower max_tasks or slots, or raise expected_groups if "
        "more groups have work at once.",
    )
