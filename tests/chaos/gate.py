"""The hooks a chaos world puts on a boto3 client: every call of a worker is a scheduling point.

For each call of a client the gate

1. in ``before-call`` (registered first, ahead of any model endpoint), makes the call a scheduling
   point: a worker thread waits there until the scheduler lets it go on, and the payload it gets is
   the fault the test chose for this call, which the injector then raises (or arms for after), or
   the :class:`Crash` of the worker process it runs in (:mod:`.worker_world`), raised as it is;
2. in ``after-call``, tells the observer what the call did (it succeeded or not: the world reads
   back what a write left), then raises a fault armed for after the call.

The job function's own points (the start and the end of a run) go through :meth:`Gate.job_point`.
The test's own calls (operators, readers) pass through: the scheduler only stops worker threads, and
only a worker is ever handed a fault.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .calls import Point, api_params, attach_param_memory, point_of_call
from .faults import Crash, Fault, FaultInjector
from .scheduler import Scheduler

_POINT = "chaos.point"

#: Told of every call after it returned: (point, succeeded, parsed response).
Observer = Callable[[Point, bool, dict[str, Any]], None]


class Gate:
    """Attaches the scheduler, the injector and an observer to boto3 clients."""

    def __init__(self, scheduler: Scheduler, injector: FaultInjector, observer: Observer) -> None:
        self._scheduler = scheduler
        self._injector = injector
        self._observer = observer

    def attach(self, client: Any) -> None:
        """Gate every call of ``client`` (before any other ``before-call`` handler of its service)."""
        service = str(client.meta.service_model.service_id).lower()
        attach_param_memory(client)

        def before(model: Any, context: dict[str, Any], **_: Any) -> None:
            point = point_of_call(service, str(model.name), api_params(context))
            context[_POINT] = point
            self._pass(point, context)

        def after(http_response: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
            point = context.get(_POINT)
            if not isinstance(point, Point):
                return
            self._observer(point, int(http_response.status_code) < 300, parsed)
            self._injector.after(point, context)

        client.meta.events.register_first(f"before-call.{service}", before)
        client.meta.events.register_first(f"after-call.{service}", after)

    def job_point(self, operation: str, job_id: str) -> None:
        """A point of the job function (``start``: after the claim; ``end``: after the side effect)."""
        self._pass(Point("job", operation, job_id), {})

    def _pass(self, point: Point, context: dict[str, Any]) -> None:
        payload = self._scheduler.checkpoint(point)
        if isinstance(payload, Crash):  # its process crashed (another slot's fault, not one of its own)
            raise payload
        self._injector.before(point, payload if isinstance(payload, Fault) else None, context)
