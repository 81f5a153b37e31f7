"""The runtime's settings: the one table of every setting (:mod:`.spec`, its row type :mod:`.row`) and the
configuration the function reads from its environment (:mod:`.config`). Kernel: imports neither mode."""
