"""Measuring once for every check: the plan and its phases, what a check's parameter is (a Host, a pair,
...), traffic between nodes and the locks that keep measurements apart, what each subject asks of the
nodes, what the disruptive phase does, and the diagnosis of a failure."""
