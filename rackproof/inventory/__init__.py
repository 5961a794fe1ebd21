"""The cluster as cluster.toml declares it: its nodes, lanes and bounds, the references each figure is
judged against and a figure's record with its bound, and the kinds of thing a check runs on."""
