"""rackproof.probes.sockets against `ss` output captured on the dev machine (iproute2 ss) in a
throwaway network namespace, where one process (named llama-server) listened on 10.10.0.12:8000,
0.0.0.0 bound to device mgbe0_0, 0.0.0.0, 127.0.0.1, :: (v6 only), :: (dual stack, shown as *),
::ffff:127.0.0.1, ::1, an IPv6 link-local address with its scope, and UDP 10.10.0.12:5353.
"""

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.sockets import Listener, parse_ss_listen, scope

SAMPLES = Path(__file__).parent / "samples"
TCP = [
    ("10.10.0.12", 8000, None, "specific"),
    ("0.0.0.0", 8085, "mgbe0_0", "any"),
    ("0.0.0.0", 8081, None, "any"),
    ("127.0.0.1", 8080, None, "loopback"),
    ("::", 8087, None, "any"),
    ("*", 8082, None, "any"),
    ("::ffff:127.0.0.1", 8083, None, "loopback"),
    ("::1", 8084, None, "loopback"),
]


@pytest.mark.parametrize("name, with_process", [
    ("ss_Hltnp_local_netns_listeners.txt", True),
    ("ss_ltnp_local_netns_with_header.txt", True),
    ("ss_Hltn_local_netns_no_process.txt", False),
])
def test_tcp_listeners(name, with_process):
    listeners = parse_ss_listen((SAMPLES / name).read_text())
    assert listeners == tuple(
        Listener("tcp", address, port, "llama-server" if with_process else None,
                 7649 if with_process else None, interface)
        for address, port, interface, _ in TCP)
    assert [scope(listener.local_address) for listener in listeners] == [s for *_, s in TCP]


def test_tcp_and_udp_with_netid_column():
    listeners = parse_ss_listen((SAMPLES / "ss_Htulnp_local_netns_tcp_udp.txt").read_text())
    assert listeners[0] == Listener("udp", "10.10.0.12", 5353, "llama-server", 7649)
    assert [(l.proto, l.local_address, l.port) for l in listeners[1:]] == [("tcp", a, p) for a, p, *_ in TCP]


def test_ipv6_link_local_with_scope():
    (listener,) = parse_ss_listen((SAMPLES / "ss_Hltnp_local_netns_ipv6_link_local_scope.txt").read_text())
    assert listener == Listener("tcp", "fe80::7026:55ff:fe0b:dace", 8086, "python3.11", 11237, "mgbe0_0")
    assert scope(listener.local_address) == "specific"


def test_nothing_listens():
    assert parse_ss_listen("") == ()


@pytest.mark.parametrize("address, expected", [
    ("0.0.0.0", "any"), ("*", "any"), ("::", "any"), ("[::]", "any"), ("::ffff:0.0.0.0", "any"),
    ("127.0.0.1", "loopback"), ("127.0.0.53%lo", "loopback"), ("::1", "loopback"), ("[::ffff:127.0.0.1]", "loopback"),
    ("10.10.0.12", "specific"), ("192.168.1.50", "specific"), ("fe80::1", "specific"), ("localhost", "specific"),
])
def test_scope(address, expected):
    assert scope(address) == expected


@pytest.mark.parametrize("text", [
    "ESTAB 0 0 10.10.0.11:22 10.10.0.12:51234\n",
    "LISTEN 0 128 0.0.0.0:http 0.0.0.0:*\n",  # ss without -n
    "LISTEN 0 128 0.0.0.0:\u00b2 0.0.0.0:*\n",
    "LISTEN 0 128 0.0.0.0:65536 0.0.0.0:*\n",
    "LISTEN 0 128 0.0.0.0:" + "9" * 5000 + " 0.0.0.0:*\n",   # more digits than int() reads
    'LISTEN 0 128 0.0.0.0:80 0.0.0.0:* users:(("vllm",pid=' + "9" * 5000 + ',fd=3))\n',
    "LISTEN 0 128\n",
    "Cannot open netlink socket: Protocol not supported\n",
])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_ss_listen(text)


@settings(max_examples=150, deadline=None)
@given(st.ip_addresses(), st.integers(0, 65535), st.sampled_from(["LISTEN", "UNCONN"]))
def test_rendered_rows_round_trip(ip, port, state):
    """Rows laid out as ss prints them: IPv6 in brackets, process column after the peer."""
    local = f"[{ip}]" if ip.version == 6 else str(ip)
    row = f"{state} 0      128    {local}:{port} 0.0.0.0:* users:((\"vllm\",pid=42,fd=3))\n"
    assert parse_ss_listen(row) == (Listener("tcp", str(ip), port, "vllm", 42),)
