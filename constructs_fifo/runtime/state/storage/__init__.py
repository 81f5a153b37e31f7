"""State mode's storage: the group's state item in the group table (:mod:`.store`) and its
bookkeeping's stored JSON (:mod:`.book`)."""
