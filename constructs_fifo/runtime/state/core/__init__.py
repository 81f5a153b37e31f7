"""State mode's pure core, without I/O: a batch's jobs applied to a group's committed state
(:mod:`.apply` over :mod:`.engine`), the records it reads and returns (:mod:`.records`), and the rules
on values (:mod:`.values`)."""
