"""Judging what was measured: figures against their references, a failure as one record, and the causes
each subject names; pure functions over measured values, which ask no node anything."""
