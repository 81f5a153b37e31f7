#!/usr/bin/env python3
"""The account events example's app: stack ``AccountEvents`` (``account_events_stack.py``)."""

from __future__ import annotations

from account_events_stack import STACK_NAME, AccountEventsStack
from aws_cdk import App

app = App()
AccountEventsStack(app, STACK_NAME)
app.synth()
