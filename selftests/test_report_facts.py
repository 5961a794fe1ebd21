"""The Nodes table's facts: read from the evidence of commands whose answer is a fact (real
tool output from selftests/samples), overridden by facts a check declares; and whether each
node was reached."""

from pathlib import Path

from rackproof.probes.ethtool import ETHTOOL
from rackproof.probes.fec import FEC
from rackproof.probes.ip import ADDRESSES
from rackproof.probes.jetson import DPKG_VERSIONS, NV_TEGRA_RELEASE
from rackproof.probes.nvidia_smi import NVIDIA_SMI
from rackproof.probes.system import HOSTNAME, LOGIN
from rackproof.report import facts

SAMPLES = Path(__file__).with_name("samples")


def ev(node, command, stdout="", exit_status=0, note="", started=0.0, probe="", values=None):
    return {"node": node, "command": command, "exit_status": exit_status, "stdout": stdout, "stderr": "",
            "duration": 0.1, "started": started, "note": note, "probe": probe, "values": values or {}}


def made(node, probe, stdout, exit_status=0, **values):
    """Evidence as Host.run leaves it: the command, the probe that made it and its values."""
    return ev(node, str(probe.command(**values)), stdout, exit_status, probe=probe.name,
              values={k: list(v) if isinstance(v, list) else v for k, v in values.items()})


def test_facts_from_evidence_and_declared_facts():
    tests = [
        {"evidence": [made("thor-1", HOSTNAME, "thor-1\n"), made("thor-1", LOGIN, "nvidia\n"),
                      made("thor-1", ADDRESSES, (SAMPLES / "ip_j_addr_router_multi_addr.json").read_text()),
                      made("thor-1", NV_TEGRA_RELEASE, (SAMPLES / "nv_tegra_release_R38.2.0_jp7.txt").read_text()),
                      made("thor-1", DPKG_VERSIONS, "nvidia-jetpack\tii \t7.0+b128\n", packages=["nvidia-jetpack"]),
                      made("thor-1", NVIDIA_SMI, (SAMPLES / "nvidia_smi_thor_595.78_idle_PARTIAL.txt").read_text()),
                      made("thor-1", ETHTOOL, "Settings for mgbe0_0:\n\tSpeed: 25000Mb/s\n\tLink detected: yes\n",
                           interface="mgbe0_0"),
                      made("thor-1", FEC, "FEC parameters for mgbe0_0:\nSupported/Configured FEC encodings: RS\n"
                                          "Active FEC encoding: RS\n", interface="mgbe0_0")],
         "facts": {}},
        {"evidence": [made("thor-2", HOSTNAME, "thor-9\n"), made("thor-2", NV_TEGRA_RELEASE, "garbage"),
                      made("thor-2", LOGIN, "", exit_status=1)],
         "facts": {"thor-2": {"hostname": "thor-2 (declared)", "jetpack": "7.0"}}},
    ]
    nodes, interfaces = facts.collect(tests)
    one = nodes["thor-1"]
    assert (one["hostname"], one["login"], one["L4T"], one["nvidia-jetpack"]) == ("thor-1", "nvidia", "R38.2.0", "7.0+b128")
    assert one["GPU driver"] and "127.0.0.1" not in one["addresses"] and "/" in one["addresses"]
    assert nodes["thor-2"] == {"hostname": "thor-2 (declared)", "jetpack": "7.0"}   # unreadable and failed: no fact
    assert interfaces[("thor-1", "mgbe0_0")] == {"link": "yes", "speed": "25000Mb/s", "fec": "RS"}


def test_a_fact_is_found_by_the_probe_that_made_the_command_never_by_its_text():
    # the same text made by no probe (a batch's part, a request) is no fact
    tests = [{"evidence": [ev("thor-1", "hostname", "thor-7\n"), ev("thor-1", "LC_ALL=C ethtool mgbe0_0",
                                                                   "Settings for mgbe0_0:\n\tLink detected: no\n")],
              "facts": {}}]
    assert facts.collect(tests) == ({}, {})


def test_a_node_is_reached_when_its_last_command_got_through_else_unreachable_since_when():
    tests = [{"evidence": [ev("thor-5", "hostname", exit_status=None, note="unreachable: no route to host", started=10),
                           ev("thor-4", "hostname", exit_status=None, note="timed out after 5 s", started=11),
                           ev("thor-3", "hostname", exit_status=None, note="unreachable: banner", started=12),
                           ev("thor-3", "id -un", "nvidia", started=13),
                           ev("thor-2", "id -un", "nvidia", started=14)]},
             {"evidence": [ev("thor-2", "ethtool -S", exit_status=None, note="unreachable: no route", started=60),
                           ev("thor-2", "hostname", exit_status=None, note="unreachable: refused", started=61)]}]
    assert facts.reachability(tests) == {
        "thor-5": {"status": "unreachable", "reason": "no route to host", "since": "1970-01-01T00:00:10+00:00"},
        "thor-4": {"status": "reached", "reason": ""},
        "thor-3": {"status": "reached", "reason": ""},
        # answered, then a fresh connect failed: declared unreachable at that moment, for its reason
        "thor-2": {"status": "unreachable", "reason": "no route", "since": "1970-01-01T00:01:00+00:00"}}
