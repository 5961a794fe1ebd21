"""Each tool's output as the real tool prints it, for the stand-ins of the simulated nodes.

One module per product probe module, named alike; each renderer's tests parse what it prints
with the product's parser, and compare it with the real samples (selftests/test_probe_*.py)."""
