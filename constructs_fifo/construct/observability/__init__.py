"""What an operator watches: the alarms, each description naming the first command to run
(:mod:`.alarms`), the CloudWatch dashboard with the runtime metrics it draws (:mod:`.dashboard`), and
the runtime's metrics of a queue, the construct's ``metric_*`` methods (:mod:`.metrics`). Imports the
settings room only."""
