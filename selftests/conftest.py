"""Selftests: the suite's own tests. Shared helpers live in selftests/suite.py."""

pytest_plugins = ["pytester"]
