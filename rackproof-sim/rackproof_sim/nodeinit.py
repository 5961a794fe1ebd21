"""PID 1 of a simulated node: holds the node's mount, UTS and PID namespaces open and reaps
orphans (as init does), until the rack is taken down.

    ip netns exec NS unshare --mount --uts --pid --fork --mount-proc ... python3 -m rackproof_sim.nodeinit NODE
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    node = sys.argv[1] if len(sys.argv) > 1 else "node"
    try:
        from .util import set_proctitle
        set_proctitle(["rackproof-sim-init", node])
    except Exception:  # noqa: BLE001 - a title is a nicety
        pass
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    signal.signal(signal.SIGCHLD, lambda *a: None)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            signal.pause()
        except InterruptedError:
            pass


if __name__ == "__main__":
    main()
