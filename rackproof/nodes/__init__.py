"""Talking to nodes: a probe run over SSH or replayed, its evidence, a group of nodes asked at once, the
run's measurement servers, the run's shared folders, and what one process hands another."""
