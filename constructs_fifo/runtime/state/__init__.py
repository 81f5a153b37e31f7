"""State mode: each job is a transition of its group's state, committed once, in order, in one write.

Its rooms, top down (a group's records walk down them once): ``processor`` (the batch: reads the
groups, runs each), ``replay`` (a resuming group's kept records, page by page), ``commit`` (one
group's run committed: what it owes paid, its transitions watched, the core, one write),
``crash_watch`` (a crashed transition counted as an attempt), ``outcomes`` (a group's dead letters,
sent or owed, its lines and its one write), ``storage/`` (the group table's items and their codecs:
the state item, its bookkeeping's JSON, the run item) and ``core/`` (the pure rules: the records,
the values, a group's records applied). It imports only the kernel (:mod:`constructs_fifo.runtime`),
never claim mode.
"""
