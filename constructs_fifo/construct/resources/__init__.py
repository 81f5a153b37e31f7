"""The AWS resources the construct makes: the FIFO queue and its dead-letter queue (:mod:`.queues`),
the tables the mode needs (:mod:`.tables`), the function with its log group, role and environment
(:mod:`.function`), and least privilege, the log key's policy and the public grants
(:mod:`.permissions`). Imports the settings and code rooms."""
