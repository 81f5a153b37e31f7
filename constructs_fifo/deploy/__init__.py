"""Deploying an app's stacks: the preflight (what an account would refuse, checked before CloudFormation
runs: :mod:`~constructs_fifo.deploy.preflight`, also ``constructs-fifo doctor``) and the CDK CLI
(:mod:`~constructs_fifo.deploy.cdk`: synth, preflight, bootstrap, deploy, outputs)."""

from __future__ import annotations

__all__: list[str] = []
