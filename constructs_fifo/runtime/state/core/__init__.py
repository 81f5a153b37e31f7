"""State mode's pure core, without I/O: a group's records (or jobs) of one batch applied to its committed
state (:mod:`.apply` over :mod:`.engine`), the records it reads and returns (:mod:`.records`), and the
rules on values (:mod:`.values`)."""
