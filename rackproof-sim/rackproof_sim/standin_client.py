"""A simulated node's read-only tool as its users run it (the wrapper on the node's PATH runs
`python3 -I -S standin_client.py TOOL ARGS...`): it hands its arguments and its stdin, stdout and
stderr to the node's stand-in server (rackproof_sim.standins.server), which prints as the tool
does, as the caller, and exits with the tool's status. It imports only _socket: it starts for
every call, in a few milliseconds."""

import _socket
import sys

SOCKET = "/run/rackproof-standins.sock"     # in the node's own /run


def main() -> int:
    fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    try:
        conn.connect(SOCKET)
        conn.sendmsg([("\0".join(sys.argv[1:])).encode(errors="surrogateescape")],
                     [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        status = conn.recv(1)
    except OSError as e:
        sys.stderr.write(f"rackproof sim: the node's stand-in server did not answer ({SOCKET}: {e})\n")
        return 127
    finally:
        conn.close()
    if not status:
        sys.stderr.write(f"rackproof sim: the node's stand-in server ended {sys.argv[1]} without an exit status\n")
        return 1
    return status[0]


if __name__ == "__main__":
    sys.exit(main())
