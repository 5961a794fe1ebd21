"""Under pytest-xdist, hand tests to workers one or two at a time, in collection order.

Throughput pairs are collected as rounds of disjoint pairs (rackproof.kinds). xdist's default
hands each worker a block of consecutive tests, which would give one worker a whole round and
make the others wait on its node locks; dealt out one by one, a round's pairs run side by side.
xdist's own `--maxschedchunk 1` does that: each worker starts with two tests and is topped up
one at a time. The locks keep it safe either way; a `--maxschedchunk` given on the command line
is left as it is.
"""

import pytest


def deal_one_by_one(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist") and config.getoption("dist", None) == "load" \
            and config.getoption("maxschedchunk", None) is None:
        config.option.maxschedchunk = 1
