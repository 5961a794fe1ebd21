"""The simulated bench rack: real sshd, real veth links, real iperf3 and real HTTP engines in
network namespaces, with the hardware a namespace cannot have (PHY speed and FEC, RDMA
devices, GPU tools, release files) modelled per node and shown by stand-ins that print the real
tools' formats. Faults can be planted and healed while it runs.

    rackproof sim up thor5          # prints the inventory path
    rackproof sim exec -- python3 -m pytest --inventory=/run/rackproof-sim/thor5/cluster.toml
    rackproof sim fault thor-2 lane-down mgbe1_0
    rackproof sim heal --all
    rackproof sim down

The library (rack.py and friends) never imports pytest. The package itself imports nothing: the
stand-ins start as a process per call of a node's tool, and a rack's profiles (rackproof_sim.profiles)
are none of their business.
"""
