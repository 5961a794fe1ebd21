"""Pure parsers: the text a tool prints -> typed facts. One module per tool.

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
