"""The container worker: ``constructs-fifo worker``, the consumer a container runs instead of Lambda.

It receives its own records from the FIFO queue, runs each batch through the configured mode's
processor (the batch skeleton's seam, ``process_batch``) in one of ``slots`` threads, keeps a
running batch's records and claim alive with a heartbeat (:mod:`constructs_fifo.worker.heartbeat`),
and stops gracefully on SIGTERM (:mod:`constructs_fifo.worker.loop`).
Stdlib and boto3 only, like the runtime: ``pip install constructs-fifo`` runs it. Importing this package
imports nothing.
"""

from __future__ import annotations
