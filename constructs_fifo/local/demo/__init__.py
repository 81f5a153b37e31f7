"""The demo: the sample app driven end to end, locally or on AWS (``constructs-fifo demo``).

- :mod:`~constructs_fifo.local.demo.sample_app`: the sample app's contract, stated once;
- :mod:`~constructs_fifo.local.demo.workload`: the jobs the demo sends (pure, seeded);
- :mod:`~constructs_fifo.local.demo.verify`: what a run must leave behind, and reading it back;
- :mod:`~constructs_fifo.local.demo.steps`: the steps the scenarios share;
- :mod:`~constructs_fifo.local.demo.scenario_verify`: the full workload, verified;
- :mod:`~constructs_fifo.local.demo.scenario_divergence`: the same events in two producer orders;
- :mod:`~constructs_fifo.local.demo.scenario_events`: seed 004's account events, the agent and the
  verdict (pure); :mod:`~constructs_fifo.local.demo.scenario_events_run`: them through the sample's bus,
  pipe and ``Accounts`` queue.

This package imports nothing itself, so ``app.py`` can import the contract at synth time.
"""

from __future__ import annotations

__all__: list[str] = []
