"""Every parser in rackproof.probes against hostile input (issue 10).

- any text; real samples damaged (lines dropped, repeated, moved, replaced; numbers made inf,
  nan, -0, 1e999 or thousands of digits long; control characters put in): each input drawn once
  and given to every parser, then each parser's own samples damaged, then its JSON samples
  damaged as documents. INPUTS_PER_PARSER hypothesis inputs a parser a run, at least 1,000;
- about 50 kB of text built to make a backtracking regex or a quadratic loop hang the suite: a
  linear parser reads each in milliseconds;
- JSON nested up to the interpreter's recursion limit;
- inputs of one shape at 64 KiB and at 1 MiB (a line start, a run of one unit, an end; units
  and starts from the adversarial ones and from the parser's own samples): the time a parser
  takes per character must not grow with the size (a complexity check, so its one timed ratio
  is generous and measured as the best of three).

Each gives a value of its type with every figure finite, or the parser's ParseError.
"""

import importlib
import inspect
import datetime
import gc
import ipaddress
import pkgutil
import re
import sys
import time
from dataclasses import dataclass
from functools import cache
from typing import Callable

import pytest
from hypothesis import given, settings, strategies as st

import rackproof.probes
from rackproof.checks import catalog
from rackproof.probes import ParseError
from rackproof.probes.accounts import Account, parse_passwd, parse_processes
from rackproof.probes.agent import AgentCommand, parse_agent_process
from rackproof.probes.bonding import BondInfo, parse_bonding
from rackproof.probes.boot import parse_boot_id
from rackproof.probes.chrony import Tracking, parse_tracking
from rackproof.probes.counters import parse_bytes, parse_ethtool_driver, parse_ethtool_stats
from rackproof.probes.docker import Image, parse_image_id
from rackproof.probes.ethtool import DriverInfo, LinkInfo, parse_driver_info, parse_ethtool
from rackproof.probes.fec import FecInfo, parse_fec
from rackproof.probes.files import parse_config_files, parse_hosts_file
from rackproof.probes.getent import parse_getent_hosts
from rackproof.probes.ibdev2netdev import parse_ibdev2netdev
from rackproof.probes.ip import Route, parse_ip_addr, parse_ip_route_get, parse_route_table
from rackproof.probes.iperf import IperfResult, parse_iperf3
from rackproof.probes.release import Firmware, parse_bios_version, parse_kernel
from rackproof.probes.kernellog import KernelLog, parse_kernel_log
from rackproof.probes.jetson import (
    L4TRelease, PowerMode, parse_dpkg_versions, parse_jetson_clocks, parse_nv_tegra_release, parse_nvpmodel)
from rackproof.probes.lldp import parse_neighbours
from rackproof.probes.nccl import NcclResult, parse_nccl
from rackproof.probes.nccl import NcclSettings, NcclSetup, parse_nccl_run, parse_nccl_settings, parse_nccl_setup
from rackproof.probes.netplan import FileMode, NetplanNaming, parse_mode_owner, parse_netplan_naming
from rackproof.probes.nvidia_smi import NvidiaSmiBanner, parse_gpus, parse_nvidia_smi_banner, parse_nvidia_smi_query
from rackproof.probes.perftest import LatencyResult, PerftestResult, parse_ib_write_bw, parse_ib_write_lat
from rackproof.probes.rdmasysfs import RdmaDevice, parse_rdma_sysfs
from rackproof.probes.ping import PingResult, parse_ping
from rackproof.probes.sockets import parse_ss_listen, parse_ss_ports, scope
from rackproof.probes.sparkrun import ClusterDefinition, SetupCheck, parse_cluster_show, parse_setup_check, parse_version
from rackproof.probes.sse import ChatStream, collect_chat_stream, parse_models, parse_sse_chunks
from rackproof.probes.slurm import MungeDecode, parse_partition, parse_scontrol_ping, parse_sinfo_nodes, parse_unmunge
from rackproof.probes.sshcheck import (
    SshConnection, classify_ssh_failure, parse_fanout, parse_offered_methods, parse_ssh_connection)
from rackproof.probes.sshkeys import parse_key_fingerprints
from rackproof.probes.sudo import parse_sudo_list
from rackproof.probes.survey import Survey, parse_survey
from rackproof.probes.sysctl import parse_sysctl
from rackproof.probes.systemd import parse_systemctl_show
from rackproof.probes.system import parse_answer, parse_clock
from selftests.robustness import (
    ENDED_RUNS, LINE_STARTS, RUNS, adversarial_inputs, damaged_json, damaged_samples, nested_json, sample, samples,
    value_or_parse_error)

# Hypothesis examples: the first two feed each example to every parser.
TEXT_EXAMPLES = 600
ANY_DAMAGED_EXAMPLES = 400      # any tool's sample, damaged
OWN_DAMAGED_EXAMPLES = 200      # for each parser, its own tool's samples, damaged
DAMAGED_JSON_EXAMPLES = 150     # for each parser of JSON, on top
INPUTS_PER_PARSER = TEXT_EXAMPLES + ANY_DAMAGED_EXAMPLES + OWN_DAMAGED_EXAMPLES

# The interfaces the ethtool samples are about, and some they are not about.
INTERFACES = sorted({name for file in samples("ethtool_*", "fec_*") for name in
                     re.findall(r'(?:Settings for |FEC parameters for |"ifname": ")([^\s":]+)', sample(file))})
GPU_FIELDS = ["index", "name", "driver_version", "memory.total", "memory.used", "compute_cap",
              "utilization.gpu", "temperature.gpu", "power.draw"]


@dataclass(frozen=True)
class Parser:
    function: Callable              # as rackproof.probes has it
    kind: type | tuple[type, ...]   # what it returns
    samples: list[str]              # real outputs of its tool, to damage
    args: st.SearchStrategy = st.just(())   # its other arguments, drawn with each input
    fixed_args: tuple = ()          # its other arguments for the large inputs
    call: Callable | None = None    # how it is given (text, *args), when not function(text, *args)
    check: Callable = lambda value: True    # what a value it returns must also satisfy
    json: str | None = None         # how a JSON document reaches it ("{}": as the text)

    def __call__(self, text: str, *args):
        return (self.call or self.function)(text, *args)

    @property
    def name(self) -> str:
        return self.function.__name__


def _all_addresses(hosts: dict[str, tuple[str, ...]]) -> bool:
    try:
        return all(ipaddress.ip_address(address) for found in hosts.values() for address in found)
    except ValueError:
        return False


PARSERS = [
    Parser(parse_agent_process, (AgentCommand, type(None)), samples("ps_*"),
           args=st.tuples(st.just("thor-tigress-agent") | st.text(min_size=1, max_size=12))),
    Parser(parse_bonding, BondInfo, samples("bonding_*")),
    Parser(parse_boot_id, str, samples("boot_id_*")),
    Parser(parse_survey, Survey, samples("survey_*")),
    Parser(parse_ethtool, LinkInfo, samples("ethtool_*"),
           args=st.tuples(st.sampled_from(INTERFACES) | st.text(max_size=16)), fixed_args=("eth0",)),
    Parser(parse_fec, FecInfo, samples("fec_*"),
           args=st.tuples(st.sampled_from(INTERFACES) | st.text(max_size=16)), fixed_args=("eth0",), json="{}"),
    Parser(parse_getent_hosts, dict, samples("getent_*"), check=_all_addresses),
    Parser(parse_ibdev2netdev, tuple, samples("ibdev2netdev_*", "rdma_link_*", "playbook_*")),
    Parser(parse_ip_addr, tuple, samples("ip_j_addr_*", "ip_j_link_*", "ip_addr_*"), json="{}"),
    Parser(parse_ip_route_get, Route, samples("ip_j_route_get_*"), json="{}"),
    Parser(parse_route_table, tuple, samples("ip_j_route_show_*"), json="{}"),
    Parser(parse_config_files, dict, samples("config_files_*")),
    Parser(parse_hosts_file, tuple, samples("hosts_file_*", "getent_*")),
    Parser(parse_sysctl, dict, samples("sysctl_*")),
    Parser(parse_key_fingerprints, tuple, samples("ssh_keygen_*")),
    Parser(parse_iperf3, IperfResult, samples("iperf3_*"), json="{}"),
    Parser(parse_nv_tegra_release, L4TRelease, samples("nv_tegra_release_*")),
    Parser(parse_dpkg_versions, dict, samples("dpkg_query_*")),
    Parser(parse_nvpmodel, PowerMode, samples("nvpmodel_*")),
    Parser(parse_jetson_clocks, tuple, samples("jetson_clocks_*"), check=lambda clocks: all(c.name for c in clocks)),
    Parser(parse_nccl, NcclResult, samples("nccl_*")),
    Parser(parse_mode_owner, (FileMode, type(None)), samples("stat_*")),
    Parser(parse_netplan_naming, NetplanNaming, samples("netplan_naming_*")),
    Parser(parse_answer, str, samples("hostname_*", "id_un_*"), check=lambda answer: answer == answer.strip()),
    Parser(parse_clock, datetime.datetime, samples("date_u_s_*")),
    Parser(parse_neighbours, tuple, samples("lldpcli_*"), json="{}"),
    Parser(parse_ethtool_stats, dict, samples("ethtool_S_*"),
           check=lambda counters: all(isinstance(v, int) and v >= 0 for v in counters.values())),
    Parser(parse_ethtool_driver, str, samples("ethtool_i_*"), check=lambda driver: driver and driver == driver.strip()),
    Parser(parse_bytes, tuple, samples("sysfs_rx_tx_bytes_*")),
    Parser(parse_nvidia_smi_query, tuple, samples("nvidia_smi_*"),
           args=st.tuples(st.lists(st.sampled_from(GPU_FIELDS) | st.text(max_size=8), min_size=1, max_size=7)),
           fixed_args=(["name", "memory.total"],)),
    Parser(parse_nvidia_smi_banner, NvidiaSmiBanner, samples("nvidia_smi_*")),
    Parser(parse_gpus, tuple, samples("nvidia_smi_*"), check=lambda gpus: all(g.name and g.driver_version for g in gpus)),
    Parser(parse_ib_write_bw, PerftestResult, samples("ib_write_bw_*")),
    Parser(parse_ib_write_lat, LatencyResult, samples("ib_write_lat_*")),
    Parser(parse_ping, PingResult, samples("ping_*"), args=st.tuples(st.none() | st.text(max_size=10)),
           fixed_args=("thor-2",)),
    Parser(parse_ss_listen, tuple, samples("ss_*"),
           check=lambda listeners: all(scope(listener.local_address) in ("any", "loopback", "specific")
                                       for listener in listeners)),
    Parser(parse_ss_ports, frozenset, samples("ss_*"),
           check=lambda ports: all(isinstance(port, int) and 0 <= port <= 65535 for port in ports)),
    Parser(parse_sse_chunks, list, samples("vllm_stream_*"), call=lambda text: list(parse_sse_chunks(text.splitlines()))),
    Parser(collect_chat_stream, ChatStream, samples("vllm_stream_*"),
           call=lambda text: collect_chat_stream(text.splitlines()), json="data: {}"),
    Parser(parse_models, tuple, samples("*_models_*.json"), json="{}"),
    Parser(parse_ssh_connection, (SshConnection, type(None)), samples("ssh_connection_*")),
    Parser(classify_ssh_failure, str, samples("ssh_*"), args=st.tuples(st.just(255) | st.integers(-1, 256)),
           fixed_args=(255,), call=lambda text, status: classify_ssh_failure(status, text), check=bool),
    Parser(parse_offered_methods, tuple, samples("ssh_*"), check=lambda methods: all(methods)),
    Parser(parse_fanout, dict, samples("fanout_ssh_*"),
           args=st.tuples(st.lists(st.sampled_from(["thor-1", "thor-3", "thor-4"]) | st.text(max_size=8), max_size=5)),
           fixed_args=(["thor-3", "thor-4", "thor-5", "thor-1"],)),
    Parser(parse_scontrol_ping, tuple, samples("slurm_scontrol_ping_*"), check=bool),
    Parser(parse_sinfo_nodes, dict, samples("slurm_sinfo_*")),
    Parser(parse_partition, dict, samples("slurm_partition_*")),
    Parser(parse_unmunge, MungeDecode, samples("unmunge_*")),
    Parser(parse_sudo_list, tuple, samples("sudo_l_*")),
    Parser(parse_systemctl_show, tuple, samples("systemctl_show_*")),
    Parser(parse_tracking, Tracking, samples("chronyc_tracking_*")),
    Parser(parse_passwd, (Account, type(None)), samples("getent_passwd_*")),
    Parser(parse_processes, tuple, samples("ps_*")),
    Parser(parse_version, (str, type(None)), samples("sparkrun_version_*", "sparkrun_bash_*")),
    Parser(parse_cluster_show, (ClusterDefinition, type(None)), samples("sparkrun_cluster_show_*"), json="{}"),
    Parser(parse_setup_check, (SetupCheck, type(None)), samples("sparkrun_setup_check_*"), json="{}"),
    Parser(parse_image_id, Image, samples("docker_image_inspect_*", "docker_permission_*")),
    # --- NCCL's set-up from its own debug lines, the nodes' NCCL settings (issue 43)
    Parser(parse_nccl_setup, NcclSetup, samples("nccl_*")),
    Parser(parse_nccl_run, NcclResult, samples("nccl_*")),
    Parser(parse_nccl_settings, NcclSettings, samples("nccl_settings_*")),
    # --- the kernel's own reports (issue 43)
    Parser(parse_kernel_log, KernelLog, samples("journalctl_*", "kernel_*", "dmesg_*")),
    # --- golden configuration (issue 43)
    Parser(parse_kernel, str, samples("uname_r_*")),
    Parser(parse_bios_version, Firmware, samples("bios_version_*")),
    # --- the hardware behind the CX7 links (issue 43)
    Parser(parse_driver_info, DriverInfo, samples("ethtool_i_*")),
    Parser(parse_rdma_sysfs, RdmaDevice, samples("show_gids_*", "rdma_sysfs_*"),
           args=st.sampled_from([("rocep1s0f1",), ("mlx5_0",)]), fixed_args=("rocep1s0f1",)),
]
PARSER_IDS = [parser.name for parser in PARSERS]
WITH_JSON_SAMPLES = [parser for parser in PARSERS if any(name.endswith(".json") for name in parser.samples)]
READING_JSON = [parser for parser in PARSERS if parser.json]
ADVERSARIAL = adversarial_inputs()


def test_every_parser_of_the_probes_is_here():
    found = set()
    for module in pkgutil.iter_modules(rackproof.probes.__path__):
        functions = inspect.getmembers(importlib.import_module(f"rackproof.probes.{module.name}"), inspect.isfunction)
        found |= {function for name, function in functions if name.startswith(("parse_", "collect_", "classify_"))}
    assert found == {parser.function for parser in PARSERS}


def test_every_probe_of_the_catalog_has_its_parser_here():
    parsers = {probe.parser for probe in catalog() if probe.parser is not None}
    of_the_probes = {parser for parser in parsers if parser.__module__.startswith("rackproof.probes.")}
    assert of_the_probes and of_the_probes <= {parser.function for parser in PARSERS}
    assert parsers - of_the_probes == {str}   # "at once": the text as it is


def test_each_parser_gets_at_least_a_thousand_inputs_a_run():
    assert INPUTS_PER_PARSER >= 1000


def _holds(parser: Parser, text: str, args: tuple) -> None:
    value = value_or_parse_error(parser, parser.kind, text, *args)
    assert value is None or parser.check(value), f"{parser.name}: {value!r}"


@settings(max_examples=TEXT_EXAMPLES, deadline=None)
@given(data=st.data())
def test_any_text(data):
    text = data.draw(st.text() | st.text().map("[".__add__) | st.text().map("{".__add__), label="text")
    for parser in PARSERS:
        _holds(parser, text, data.draw(parser.args, label=parser.name))


@settings(max_examples=ANY_DAMAGED_EXAMPLES, deadline=None)
@given(data=st.data())
def test_any_damaged_sample(data):
    text = data.draw(damaged_samples(samples("*")), label="text")
    for parser in PARSERS:
        _holds(parser, text, data.draw(parser.args, label=parser.name))


@pytest.mark.parametrize("parser", PARSERS, ids=PARSER_IDS)
@settings(max_examples=OWN_DAMAGED_EXAMPLES, deadline=None)
@given(data=st.data())
def test_own_damaged_samples(parser, data):
    _holds(parser, data.draw(damaged_samples(parser.samples), label="text"), data.draw(parser.args, label="args"))


@pytest.mark.parametrize("parser", WITH_JSON_SAMPLES, ids=[parser.name for parser in WITH_JSON_SAMPLES])
@settings(max_examples=DAMAGED_JSON_EXAMPLES, deadline=None)
@given(data=st.data())
def test_damaged_json_documents(parser, data):
    names = [name for name in parser.samples if name.endswith(".json")]
    _holds(parser, data.draw(damaged_json(names), label="text"), data.draw(parser.args, label="args"))


@pytest.mark.parametrize("name", ADVERSARIAL)
@pytest.mark.parametrize("parser", PARSERS, ids=PARSER_IDS)
def test_large_adversarial_input(parser, name):
    _holds(parser, ADVERSARIAL[name], parser.fixed_args)


@pytest.mark.parametrize("parser", READING_JSON, ids=[parser.name for parser in READING_JSON])
def test_json_nested_up_to_the_recursion_limit(parser):
    # A document the first decoding accepts can overflow the stack a few frames deeper (iperf3
    # re-encodes and re-decodes it): the depths tried are counted from this test's own frame.
    frame, frames = sys._getframe(), 0
    while frame:
        frame, frames = frame.f_back, frames + 1
    deepest = sys.getrecursionlimit() - frames
    for depth in range(deepest - 100, deepest + 10):
        for document in nested_json(depth):
            _holds(parser, parser.json.format(document), parser.fixed_args)


# --- linear time ------------------------------------------------------------------------------

SMALL, LARGE = 64 << 10, 1 << 20    # characters
LINEAR_EXAMPLES = 8                 # shapes per parser a run
PER_CHARACTER_RATIO = 6             # linear: 1, up to 2.5 where 1 MiB outgrows the CPU caches; quadratic: 16
QUICK = 0.005                       # seconds: a parse of 1 MiB this fast cannot hang a run, whatever its shape


@dataclass(frozen=True)
class Shape:
    start: str
    unit: str
    end: str

    def text(self, size: int) -> str:
        return self.start + self.unit * max(1, (size - len(self.start)) // len(self.unit)) + self.end


@cache
def sample_parts(names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(the first half of each sample, in whole lines; each line of each sample with its newline)."""
    texts = [sample(name) for name in names]
    return ([text[:text.find("\n", len(text) // 2) + 1] for text in texts],
            sorted({line for text in texts for line in text.splitlines(keepends=True)}))


@st.composite
def shapes(draw, parser: Parser) -> Shape:
    heads, lines = sample_parts(tuple(parser.samples))
    start = draw(st.just("") | st.sampled_from(sorted(LINE_STARTS.values())) | st.sampled_from(heads))
    unit = draw(st.sampled_from(sorted(RUNS.values())) | st.sampled_from(sorted(ENDED_RUNS.values()))
                | st.sampled_from(lines) | st.text(min_size=1, max_size=8))
    return Shape(start, unit, draw(st.sampled_from(["", "x", "\n", "\n\n"])))


def parse_time(parser: Parser, text: str, runs: int) -> float:
    """The best process time of `runs` parses. No collection runs meanwhile: when one comes
    depends on the whole heap, not on the parser."""
    best = float("inf")
    for _ in range(runs):
        gc.disable()
        try:
            started = time.process_time()
            try:
                parser(text, *parser.fixed_args)
            except ParseError:
                pass
            best = min(best, time.process_time() - started)
        finally:
            gc.enable()
    return best


@pytest.mark.parametrize("parser", PARSERS, ids=PARSER_IDS)
@settings(max_examples=LINEAR_EXAMPLES, deadline=None)
@given(data=st.data())
def test_time_grows_linearly_with_the_input(parser, data):
    shape = data.draw(shapes(parser), label="shape")
    small, large = shape.text(SMALL), shape.text(LARGE)
    if parse_time(parser, large, 1) < QUICK:
        return
    ratio = per_character_ratio(parser, small, large)
    if ratio >= PER_CHARACTER_RATIO:
        # measured once more before it fails: five selftest workers on two cores once made a
        # linear parser 8.6 times slower a character at 1 MiB, and under 6 when hypothesis asked
        # again; a quadratic one is about 16 both times
        ratio = min(ratio, per_character_ratio(parser, small, large))
    assert ratio < PER_CHARACTER_RATIO, f"{parser.name}: {ratio:.1f} times the time per character at 1 MiB"


def per_character_ratio(parser: Parser, small: str, large: str) -> float:
    """The time per character at 1 MiB over the time per character at 64 KiB."""
    per_character = [parse_time(parser, text, 3) / len(text) for text in (small, large)]
    return per_character[1] / max(per_character[0], 1e-12)
