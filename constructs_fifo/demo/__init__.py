"""The demo: the sample app driven end to end, locally or on AWS (``constructs-fifo demo``).

- :mod:`~constructs_fifo.demo.sample_app`: the sample app's contract, stated once;
- :mod:`~constructs_fifo.demo.workload`: the jobs the demo sends (pure, seeded);
- :mod:`~constructs_fifo.demo.verify`: what a run must leave behind, and reading it back;
- :mod:`~constructs_fifo.demo.steps`: the steps the scenarios share;
- :mod:`~constructs_fifo.demo.scenarios.pipeline`: the full workload, verified;
- :mod:`~constructs_fifo.demo.scenarios.divergence`: the same events in two producer orders;
- :mod:`~constructs_fifo.demo.scenarios.events`: seed 004's account events, the agent and the
  verdict (pure); :mod:`~constructs_fifo.demo.scenarios.events_run`: them through the sample's bus,
  pipe and ``Accounts`` queue.

This package imports nothing itself, so ``app.py`` can import the contract at synth time.
"""

from __future__ import annotations

__all__: list[str] = []
