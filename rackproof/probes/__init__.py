"""The ground of the library: one module per tool, its probes and a pure parser of the text it
prints (-> typed facts); `Probe` itself (probe), and two pure helpers the folders above share
(safetext: a node's text shown safely; bondhash: which bond member a connection leaves by). They
import nothing else of rackproof (pyproject.toml's layers).

Every parser raises ParseError (and nothing else) on text it cannot read, so a
test can turn garbage output into a failure that shows the raw text.
"""


class ParseError(ValueError):
    """Tool output that a parser cannot read."""

    def __init__(self, tool: str, reason: str, text: str = ""):
        self.tool = tool
        self.reason = reason
        self.text = text
        super().__init__(f"{tool}: {reason}")
