"""Operating a deployed ``OrderedAgentQueue``: what the ``status``, ``groups``, ``dlq``, ``claims`` and
``state`` commands do (the CLI, :mod:`constructs_fifo.cli.operations.commands`, only parses and renders).

Reads return plain objects with a ``to_dict()`` (the commands' ``--json`` documents); every change is a
:class:`~constructs_fifo.ops.plan.Plan`, refused before anything changes when the tables say no,
shown by ``--dry-run``, and applied step by step. The queue comes from the same ``--stack``/``--queue``
resolution as ``deploy`` and ``drain`` (:mod:`constructs_fifo.stacks.deployed`), wrapped with its clients and
stores in :class:`~constructs_fifo.ops.target.OpsQueue`.
"""

from __future__ import annotations

from constructs_fifo.ops.plan import Plan, PlanStep
from constructs_fifo.ops.target import CLAIM_MODE, STATE_MODE, OpsQueue

__all__ = ["CLAIM_MODE", "STATE_MODE", "OpsQueue", "Plan", "PlanStep"]
