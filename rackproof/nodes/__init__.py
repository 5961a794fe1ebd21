"""Talking to nodes: a probe run over SSH or replayed, its evidence, the run's shared folders, and what
one process hands another."""
