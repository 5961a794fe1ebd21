"""Text from a node (or from cluster.toml) shown safely: a control character in a hostname, a
tool's output or a message is shown as an escape (`\\x1b`), never sent raw to a terminal or a
page, where it could recolour, move the cursor, hide text or forge a line of its own.

Newlines and tabs are layout in multi-line output (evidence, a node's printed text), so
`shown` keeps them; `one_line` escapes them too, for anything that must stay a single line
(a problem line, a verdict, a name).
"""

from __future__ import annotations

import re

# C0 controls but \t and \n, DEL, C1 controls, and the Unicode format characters that reorder
# or hide text (bidirectional overrides and isolates, zero-width joiners, line/paragraph separators)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """`text` with every control character escaped except newline and tab (a CRLF line end,
    as from a terminal-minded tool, is a newline)."""
    return _UNSAFE.sub(_escape, text.replace("\r\n", "\n"))


def one_line(text: str) -> str:
    """`text` with every control character escaped, newlines and tabs included."""
    return _UNSAFE_ONE_LINE.sub(_escape, text)
