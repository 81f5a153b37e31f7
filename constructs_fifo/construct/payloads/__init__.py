"""``large_payloads=True``: the room of the payload bucket, its grants and its variable (``bucket``)."""
