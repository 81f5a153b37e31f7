"""State mode's storage: the group's state item in the group table (:mod:`.store`), its bookkeeping's
stored JSON (:mod:`.book`), and its run item with the crash watch's marker (:mod:`.runs`)."""
