"""Large bodies and results through the payload bucket (``large_payloads=True``): ``pointer`` (the
Extended Client's format, reading an object) and ``body`` (a record's body, resolved)."""
