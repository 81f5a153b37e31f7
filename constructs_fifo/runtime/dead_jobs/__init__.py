"""What happens to a job that died, in either mode: why it died (:mod:`.record`), the message that carries
it to the dead-letter queue (:mod:`.letters`), and its group parked at it (:mod:`.parking`). Kernel:
imports neither mode."""
