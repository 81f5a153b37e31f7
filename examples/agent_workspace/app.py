#!/usr/bin/env python3
"""The agent workspace example's app: stack ``AgentWorkspace`` (``agent_workspace_stack.py``).

``AGENT_WORKSPACE_IMAGE``, when set, names the workers' image instead of building ``Dockerfile``: an
image you pushed, or any name on the emulator (which runs no task).
"""

from __future__ import annotations

import os

from agent_workspace_stack import STACK_NAME, AgentWorkspaceStack
from aws_cdk import App
from aws_cdk import aws_ecs as ecs

IMAGE_VARIABLE = "AGENT_WORKSPACE_IMAGE"

app = App()
image = os.environ.get(IMAGE_VARIABLE)
AgentWorkspaceStack(app, STACK_NAME, image=ecs.ContainerImage.from_registry(image) if image else None)
app.synth()
