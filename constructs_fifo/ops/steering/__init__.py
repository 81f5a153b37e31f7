"""What the steering commands do (docs/steering.md): ``jobs cancel`` (:mod:`.jobs`), ``groups hold``,
``release``, ``cancel`` and ``run-first`` (:mod:`.groups`), each a plan over
:class:`~constructs_fifo.client.steering.JobSteering`."""
