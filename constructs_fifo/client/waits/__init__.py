"""Waiting beyond one job: many jobs a poll (:mod:`.many`) and the asyncio forms (:mod:`.aio`)."""
