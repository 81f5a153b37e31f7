"""Ways in: the constructs that feed an :class:`~constructs_fifo.construct.OrderedAgentQueue` from
events, each one call, least privilege.

- :mod:`.event_bus`: :class:`EventBusIngress`, an EventBridge bus's matching events through a rule, an
  encrypted staging queue and an EventBridge Pipe, whose group, deduplication id, job id, type and
  ``seq`` are JSON paths of each event (the only way a classic bus reaches a FIFO queue per entity);
- :mod:`.custom_bus`: :class:`CustomBusIngress`, a FIFO subscriber of an EventBridge Custom Event Bus
  (``AWS::EventsV2``) with JSONata group and deduplication expressions (experimental: the emulator
  cannot deploy it);
- :mod:`.sns_topic`: :class:`SnsFifoIngress`, an SNS FIFO topic's raw subscription, its group passed
  through;
- :mod:`.static_group`: the queue's validation refusing a plain rule target on its FIFO queue;
- :mod:`.paths`: the event paths and expressions, checked, and the job envelope built from them.

Imports nothing on purpose: :mod:`constructs_fifo.construct.ordered_agent_queue` loads
:mod:`.static_group` while the constructs here load the queue's module.
"""
