"""State mode: each job is a transition of its group's state, committed once, in order, in one write.

``records`` (the group's state and bookkeeping), ``engine`` and ``core`` (the pure rules of one
group's batch), ``run`` (one group's records through the core), ``store`` (the group table's state
items), ``crash_watch`` (the run marker), ``outcomes`` (lines and dead letters), ``owed`` (dead
letters owed), ``replay`` (a resuming group), ``processor`` (the batch). It imports only the kernel
(:mod:`constructs_fifo.runtime`), never claim mode.
"""
