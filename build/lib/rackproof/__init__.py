"""rackproof: hardware acceptance checks for small GPU clusters.

The library never imports pytest: the pytest glue lives in fixtures/.
"""

__version__ = "0.1.0"
