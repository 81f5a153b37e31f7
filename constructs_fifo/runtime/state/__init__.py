"""State mode: each job is a transition of its group's state, committed once, in order, in one write.

``core/`` (the pure rules: the group's records, the values, one group's batch applied), ``storage/``
(the group table's state items and the bookkeeping's JSON), ``run`` (one group's records through the
core), ``commit`` (the group commit), ``crash_watch`` (the run marker), ``outcomes`` (lines and dead
letters), ``owed`` (dead letters owed), ``replay`` (a resuming group), ``processor`` (the batch). It
imports only the kernel (:mod:`constructs_fifo.runtime`), never claim mode.
"""
