"""What an operator watches: the alarms, each description naming the first command to run
(:mod:`.alarms`), and the CloudWatch dashboard with the runtime metrics it draws (:mod:`.dashboard`).
Imports the settings room only."""
