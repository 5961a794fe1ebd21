"""What a user hands the suite on its command line: files to read and numbers, each checked
before it is used, so that a wrong one is a one-line refusal, never a hang or a traceback."""

from __future__ import annotations

import argparse
import math
import os
import stat

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_regular_file(path, limit: int) -> bytes:
    """At most `limit` + 1 bytes of the regular file at `path` (one byte more tells a caller the
    file is too large). Anything else is an OSError whose strerror says what it is: reading a
    FIFO waits for a writer forever, a device may never end. The kind is checked before the file
    is opened (opening a device can act on it) and again on what was opened, without blocking,
    in case the path was swapped in between."""
    _refuse_unless_regular(os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        _refuse_unless_regular(os.fstat(fd).st_mode)
        return f.read(limit + 1)


def read_within(path, limit: int) -> bytes:
    """The regular file at `path`, refused (an OSError whose strerror says why) when it is anything
    else or larger than `limit` bytes."""
    data = read_regular_file(path, limit)
    if len(data) > limit:
        raise OSError(0, f"larger than {limit >> 20} MiB")
    return data


def _refuse_unless_regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        raise OSError(0, f"{kind}, not a regular file")


def finite_number(text: str, *, zero: bool = False, most: float = math.inf) -> float:
    """A number option (an argparse type): finite, more than 0 (or 0 itself when `zero`) and
    at most `most`. float() reads "nan", "inf" and "1e999" (as inf): a timeout or a tolerance
    of those never runs out or never flags anything."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    if value < 0 or value == 0 and not zero:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number {'of 0 or more' if zero else 'more than 0'}")
    if value > most:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of at most {most:g}")
    return value
