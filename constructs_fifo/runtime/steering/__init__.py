"""Steering jobs already sent, in either mode: what a control reports (:mod:`.report`). Each mode keeps
its own writes where its runtime already reads (claim mode: :mod:`constructs_fifo.runtime.claim.cancel`;
state mode: :mod:`constructs_fifo.runtime.state.storage.cancels`). Kernel: imports neither mode."""
