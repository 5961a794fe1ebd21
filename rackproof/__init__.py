"""rackproof: hardware acceptance checks for small GPU clusters.

The library never imports pytest: the pytest glue is the plugin's hooks (rackproof.plugin) and
the suite's fixtures (fixtures/).
"""

__version__ = "0.1.0"
