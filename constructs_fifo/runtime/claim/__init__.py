"""Claim mode: each job is claimed in the claim table before its side effect runs.

``store`` (the claim table), ``runner`` (one job under its claim), ``processor`` (the batch). It
imports only the kernel (:mod:`constructs_fifo.runtime`), never state mode.
"""
