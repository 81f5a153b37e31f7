"""The function's asset: the job code's dependencies installed for Lambda's platform (:mod:`.bundling`),
and the code staged with them and the constructs-fifo runtime (:mod:`.packaging`). Imports the settings
room only."""
