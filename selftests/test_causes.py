"""Causes chosen from evidence, and figures that could not be measured: the checks themselves,
called with nodes whose answers are scripted (real Host, Remote and parsers; only the wire is
fake). A check that cannot reach a verdict raises what the plugin reports as a failure or an
error (rackproof.plugin.evidence.CHECK_ERRORS), never returns as a pass."""

from __future__ import annotations

import json
import logging
import re
import socket
import tempfile
import threading
from pathlib import Path

import pytest

from rackproof.plugin.evidence import CHECK_ERRORS
from rackproof.measuring import plan
from rackproof.nodes.host import Host
from rackproof.nodes.http import HttpRequest, HttpResponse
from rackproof.inventory.model import FINISHED, parse_inventory
from rackproof.inventory.kinds import KINDS
from rackproof.measurements import cx7, diagnosis, engines, lanes, nccl
from rackproof.probes.probe import IN_C_LOCALE
from rackproof.inventory.references import measured
from rackproof.measuring.targets import EngineTarget, Pair
from rackproof.nodes.remote import EvidenceLog, LocalTransport, NodeUnreachable, Remote, Result
from selftests.robustness import sample
from selftests.suite import EXAMPLES
from selftests.test_remote import ssh_remote
from tests_network import test_bond as bond_checks
from tests_network import test_cx7 as cx7_checks
from tests_network import test_nccl as nccl_checks
from tests_serving import test_agent as agent_checks
from tests_serving import test_engines as engine_checks

THOR_PAIR = parse_inventory("""
[cluster]
name = "pair"
platform = "thor"
user = "nvidia"

[switch]
fec = "RS"

[[nodes]]
name = "thor-1"
address = "10.10.0.11/24"
lanes = [{ name = "e1", switch_port = 1 }, { name = "e2", switch_port = 2 }]
bond = { lanes = ["e1", "e2"], xmit_hash_policy = "layer2+3", joins_at_step = 1 }

[[nodes]]
name = "thor-2"
address = "10.10.0.12/24"
lanes = [{ name = "mgbe0_0", switch_port = 5 }]

[agent]
node = "thor-1"
key_env = "THOR_AGENT_KEY"

[[engines]]
model = "llama-3.1-8b"
node = "thor-2"
port = 8081
tokens_per_s_floor = 5

[[engines]]
model = "llama-3.1-8b"
node = "thor-1"
port = 8081
agent = false
""")
SPARK2 = (EXAMPLES / "spark2.toml").read_text()
# the sample run of NVIDIA's all_gather_perf averages 21.4 GB/s, under the default floor
SPARK_PAIR = parse_inventory(SPARK2.replace("[expect]\n", "[expect]\nnccl_busbw_floor_gbs = 20\n"))

# a vLLM stream of 24 tokens, from the real sample's chunks
_CHUNKS = sample("vllm_stream_chat_completions_qwen3_sse.txt").split("\n\n")
STREAM = "\n\n".join([_CHUNKS[0]] + [_CHUNKS[1]] * 24 + ["data: [DONE]", ""])
MODELS = json.dumps({"object": "list", "data": [{"id": "llama-3.1-8b", "object": "model"}]})

# what a check can be fed instead of a good answer: nothing, no answer in time, garbage
EMPTY, TIMED_OUT, UNPARSEABLE = "empty", "timed out", "unparseable"
BAD = {EMPTY: "", UNPARSEABLE: 'data: {"id": "chatcmpl-1", "choices": [{"delta": {"content": "Hi'}
PERFTEST_BAD = {EMPTY: "", UNPARSEABLE: "bash: line 1: ib_write_bw: command not found\n"}
NCCL_BAD = {EMPTY: "", UNPARSEABLE: "mpirun was unable to launch the specified application as it could not find "
                                    "an executable\n"}


class Scripted:
    """A transport whose answers come from a function of the command (or HTTP request); a
    TimeoutError it raises is a node that did not answer in time."""

    def __init__(self, answer):
        self.answer = answer

    def execute(self, command: str, timeout: float, repeatable: bool = False) -> Result:
        # the script answers the command; the C locale the suite sets before it is no part of it
        return self.answer(command.removeprefix(IN_C_LOCALE))

    def http(self, request: HttpRequest, timeout: float) -> HttpResponse:
        return self.answer(request)

    def close(self) -> None:
        pass


def hosts_of(inventory, answers: dict) -> dict[str, Host]:
    log = EvidenceLog()
    return {n.name: Host(n, Remote(n.name, Scripted(answers[n.name]), log)) for n in inventory.nodes
            if n.name in answers}


def measure_in(inventory):
    """The plugin's `measure` for checks called here: figures judged against that inventory's references."""
    return lambda name, subject, value, unit, **counts: measured(name, subject, value, unit, inventory.expect, **counts)


def no_guards(*_):
    pass


def failure(check, *args) -> str:
    """The message a check fails with (one of the exceptions the plugin reports, never a pass)."""
    with pytest.raises(CHECK_ERRORS) as raised:
        check(*args)
    return str(raised.value)


# --- serving: an engine and the agent answering HTTP --------------------------------------------

def http(*, chat=STREAM, health=200, agent_models=200, timed_out=(), first_token_s=0.05):
    """Answers of an engine and the agent: `chat` is what a chat completion streams (or
    TIMED_OUT), its first token after `first_token_s`; `timed_out` lists paths that never answer."""
    def answer(request: HttpRequest) -> HttpResponse:
        path = request.url.split(":", 2)[2].split("/", 1)[1]
        if f"/{path}" in timed_out or (path == "v1/chat/completions" and chat == TIMED_OUT):
            raise TimeoutError(request.describe())
        if path == "health":
            return HttpResponse(health, "", None, 0.01)
        if path == "v1/models":
            status = agent_models if request.url.endswith(":8080/v1/models") else 200
            return HttpResponse(status, MODELS, None, 0.01)
        return HttpResponse(200, BAD.get(chat, chat), first_token_s if chat == STREAM else None, first_token_s + 1.0)
    return answer


def serving_hosts(**answers):
    return hosts_of(THOR_PAIR, {"thor-1": http(**answers), "thor-2": http(**answers)})


def engine_on(hosts, node: str) -> EngineTarget:
    spec = next(e for e in THOR_PAIR.engines if e.node == node)
    return EngineTarget(hosts[node], spec, THOR_PAIR.engine_url(spec))


def planned(entry: plan.Entry, value: tuple, hosts, inventory, *causes: plan.Entry):
    """A check's `planned`: its plan entry run in this process for that one target (its locks in
    a folder of its own, gone after)."""
    log = next(iter(hosts.values())).remote.log
    with tempfile.TemporaryDirectory() as locks:
        entries = [entry, *causes]
        results = plan.run(entries, {e.key: [value] for e in entries}, plan.Context(inventory.at(FINISHED), hosts, log, Path(locks),
                                                                 access_key=lambda: "key"))
    return lambda asked: results.part(asked.key, KINDS[entry.kind].id(value)).get(log)


def engine_check(hosts):
    return (engine_checks.test_engine_answers_from_the_agent_node, engine_on(hosts, "thor-2"), measure_in(THOR_PAIR),
            planned(engines.ENGINE_ANSWERS, ("thor-2", "llama-3.1-8b"), hosts, THOR_PAIR))


def agent_check(hosts):
    return (agent_checks.test_agent_streams_each_model, engine_on(hosts, "thor-2"), THOR_PAIR, hosts,
            measure_in(THOR_PAIR), no_guards, planned(engines.AGENT_STREAM, ("thor-2", "llama-3.1-8b"), hosts, THOR_PAIR,
                                                      diagnosis.AGENT_STREAM_CAUSE))


def comparison_check(hosts):
    return (agent_checks.test_remote_model_keeps_up_with_the_local_one, engine_on(hosts, "thor-2"), THOR_PAIR, hosts,
            measure_in(THOR_PAIR), no_guards,
            planned(engines.AGENT_COMPARISON, ("thor-2", "llama-3.1-8b"), hosts, THOR_PAIR, diagnosis.AGENT_COMPARISON_CAUSE))


SERVING_CHECKS = [engine_check, agent_check, comparison_check]


@pytest.mark.parametrize("check", SERVING_CHECKS)
def test_a_serving_check_passes_on_a_good_stream(check):
    run, *args = check(serving_hosts())
    run(*args)


@pytest.mark.parametrize("answer", [EMPTY, TIMED_OUT, UNPARSEABLE])
@pytest.mark.parametrize("check", SERVING_CHECKS)
def test_a_serving_figure_that_could_not_be_measured_is_never_a_pass(check, answer):
    failure(*check(serving_hosts(chat=answer)))


def test_a_stalled_engine_is_named_with_its_node_and_accepts_but_does_not_generate():
    message = failure(*engine_check(serving_hosts(chat=TIMED_OUT)))
    assert message.startswith("llama-3.1-8b on thor-2 (10.10.0.12:8081): ")
    assert "no token within 30 s" in message   # the wait: 4 x the default 5 s bound, at least 30 s
    assert "the engine accepts requests but does not generate: check its log and GPU memory" in message
    assert "down" not in message


@pytest.mark.parametrize("check, where", [
    (engine_check, "llama-3.1-8b on thor-2 (10.10.0.12:8081): "),
    (agent_check, "llama-3.1-8b through the agent on thor-1 (-> thor-2:8081): "),
])
def test_a_late_first_token_is_a_figure_against_its_bound_not_an_engine_that_does_not_generate(check, where):
    message = failure(*check(serving_hosts(first_token_s=20.1)))
    assert message.startswith(f"{where}first token after 20.1 s (bound 5 s). Usual cause: the engine queues "
                              "requests behind other work"), message
    assert "does not generate" not in message


def test_a_first_token_within_its_bound_passes_and_is_recorded():
    run, *args = engine_check(serving_hosts(first_token_s=4.9))
    run(*args)


def test_a_stall_through_the_agent_says_stalled_while_the_engine_answers_health():
    message = failure(*agent_check(serving_hosts(chat=TIMED_OUT)))
    assert "llama-3.1-8b through the agent on thor-1" in message
    assert "accepts requests but does not generate" in message and "down" not in message


def test_a_stall_through_the_agent_says_down_only_when_the_engine_does_not_answer_health():
    message = failure(*agent_check(serving_hosts(chat=TIMED_OUT, timed_out=("/health",))))
    assert "answers /health from thor-1 with nothing: it is down or hung" in message
    assert "does not generate" not in message


@pytest.mark.parametrize("status, cause", [
    (200, "the agent does not check the key"),
    (0, "nothing answers at the agent's address"),
    (404, "the request failed before the key was checked"),
])
def test_an_agent_that_does_not_refuse_a_request_without_the_key_gets_the_cause_its_answer_shows(status, cause):
    hosts = serving_hosts(agent_models=status)
    message = failure(agent_checks.test_agent_refuses_requests_without_the_key, hosts["thor-1"], THOR_PAIR, "no key",
                      planned(engines.AGENT_WITHOUT_THE_KEY, ("thor-1",), hosts, THOR_PAIR))
    assert cause in message, message
    assert ("not running" in message) == (status == 0)


# --- RoCE and NCCL between two Sparks ------------------------------------------------------------

# a good collective as the NCCL check runs it (NCCL_DEBUG=INFO): the sample's table with a Spark pair's
# real debug lines (both PCIe functions, a release), their own "# Rank" lines left to the table's; the
# samples' hosts named as the inventory names its nodes (the check reads each node's lines by name)
GOOD_NCCL = (sample("nccl_all_gather_dgx_spark_2node_good.txt") + "".join(
    line for line in sample("nccl_debug_dgx_spark_2node_init_both_functions_PARTIAL.txt").splitlines(keepends=True)
    if not line.startswith("#"))).replace("spark-fb97", "spark-1").replace("spark-4440", "spark-2")


def node_nccl_facts(name: str, command: str) -> Result | None:
    """What the NCCL check's facts ask of a node: no NCCL_* variable and no nccl.conf (the probe's
    printenv|grep finds nothing), and the node's CX7 interfaces up at MTU 9000 (`ip -j addr`)."""
    if command.startswith("printenv"):
        return Result(command, 0, "", "", 0.1)
    if command.startswith("ip -j addr"):
        links = [{"ifname": c.name, "operstate": "UP", "mtu": 9000,
                  "addr_info": [{"family": "inet", "local": c.address.split("/")[0],
                                 "prefixlen": int(c.address.split("/")[1])}]}
                 for c in SPARK_PAIR.node(name).cx7]
        return Result(command, 0, json.dumps(links), "", 0.1)
    return None


def spark_hosts(perftest: dict[str, str] | str, nccl: str = GOOD_NCCL, tmp_path=None):
    """spark-1 runs the ib_write_bw clients and mpirun; spark-2 the ib_write_bw servers.
    `perftest`: what each client prints, by RDMA device, or TIMED_OUT."""
    def sender(command: str) -> Result:
        if facts := node_nccl_facts("spark-1", command):
            return facts
        if command.startswith("mpirun"):
            if nccl == TIMED_OUT:
                raise TimeoutError(command)
            return Result(command, 0, NCCL_BAD.get(nccl, nccl), "", 1.0)
        if perftest == TIMED_OUT:
            raise TimeoutError(command)
        for device, text in perftest.items():
            (tmp_path / device).write_text(text)
        # the clients' real script, with ib_write_bw printing what its -d device was given
        return LocalTransport("spark-1").execute(f'ib_write_bw() {{ cat {tmp_path}/"$2"; }}; {command}', 10)

    def receiver(command: str) -> Result:
        if facts := node_nccl_facts("spark-2", command):
            return facts
        # a server's start answers timeout's pid and its child's, the server (rackproof.measuring.traffic)
        return Result(command, 0, "4242 4243\n" if "setsid timeout" in command else "", "", 0.1)

    return hosts_of(SPARK_PAIR, {"spark-1": sender, "spark-2": receiver})


GOOD_RUN = sample("ib_write_bw_dgx_spark_client_run_infinitely.txt")
DEVICES = ("rocep1s0f1", "roceP2p1s0f1")


def roce_check(hosts):
    """The check of spark-1 -> spark-2, its plan entry run in this process for that pair alone."""
    return (cx7_checks.test_roce_bandwidth_over_the_port, Pair(hosts["spark-1"], hosts["spark-2"]),
            measure_in(SPARK_PAIR), planned(cx7.CX7_ROCE, ("spark-1", "spark-2"), hosts, SPARK_PAIR))


def nccl_check(hosts):
    """The collective's check, its plan entry run in this process."""
    return (nccl_checks.test_nccl_across_the_nodes, [hosts["spark-1"], hosts["spark-2"]], SPARK_PAIR,
            measure_in(SPARK_PAIR), planned(nccl.CX7_NCCL, ("spark-1", "spark-2"), hosts, SPARK_PAIR, nccl.CX7_NCCL_SETTINGS))


def test_roce_and_nccl_pass_on_good_runs(tmp_path):
    hosts = spark_hosts(dict.fromkeys(DEVICES, GOOD_RUN), tmp_path=tmp_path)
    for run, *args in (roce_check(hosts), nccl_check(hosts)):
        run(*args)


@pytest.mark.parametrize("answer", [EMPTY, TIMED_OUT, UNPARSEABLE])
def test_a_roce_figure_that_could_not_be_measured_is_never_a_pass(tmp_path, answer):
    perftest = answer if answer == TIMED_OUT else {DEVICES[0]: GOOD_RUN, DEVICES[1]: PERFTEST_BAD[answer]}
    failure(*roce_check(spark_hosts(perftest, tmp_path=tmp_path)))


@pytest.mark.parametrize("answer", [EMPTY, TIMED_OUT, UNPARSEABLE])
def test_an_nccl_figure_that_could_not_be_measured_is_never_a_pass(tmp_path, answer):
    failure(*nccl_check(spark_hosts({}, nccl=answer, tmp_path=tmp_path)))


def test_a_roce_run_with_a_header_and_no_result_names_the_link_and_the_gid_index(tmp_path):
    header_only = GOOD_RUN.split(" 65536 ", 1)[0]   # as with a GID index that does not route
    message = failure(*roce_check(spark_hosts({DEVICES[0]: GOOD_RUN, DEVICES[1]: header_only}, tmp_path=tmp_path)))
    assert "ib_write_bw -d roceP2p1s0f1 -x 3" in message and "192.168.101.11" in message
    assert "(from enP2p1s0f1np1 to spark-2 enP2p1s0f1np1)" in message
    assert "header and no result row" in message and "GID index 3 (-x 3)" in message
    assert "the part for" not in message


def test_a_slow_logical_link_is_named_by_interface_and_device(tmp_path):
    slow = GOOD_RUN.replace("97.2", "41.2")
    message = failure(*roce_check(spark_hosts({DEVICES[0]: GOOD_RUN, DEVICES[1]: slow}, tmp_path=tmp_path)))
    assert "spark-1 enP2p1s0f1np1 (roceP2p1s0f1) -> spark-2 enP2p1s0f1np1 (roceP2p1s0f1): 41.2" in message
    assert "carries less than its share of the port" in message


# --- the bond: which aggregator, and what LACP says of each member ------------------------------

BOND = sample("bonding_8023ad_kernel6.8_healthy.txt")


def with_e2(actor_state: int | None = None, aggregator: int | None = None) -> str:
    """The healthy sample with member e2's actor port state or aggregator changed."""
    head, e2 = BOND.split("Slave Interface: e2\n")
    if actor_state is not None:
        e2 = re.sub(r"(details actor lacp pdu:.*?port state: )63", rf"\g<1>{actor_state}", e2, flags=re.S)
    if aggregator is not None:
        e2 = e2.replace("Aggregator ID: 1", f"Aggregator ID: {aggregator}")
    return f"{head}Slave Interface: e2\n{e2}"


def bond_state(text: str) -> None:
    hosts = hosts_of(THOR_PAIR, {"thor-1": lambda command: Result(command, 0, text, "", 0.01)})
    bond_checks.test_bond_state(hosts["thor-1"], planned(lanes.NODE_BOND, ("thor-1",), hosts, THOR_PAIR))


@pytest.mark.parametrize("state", [63, 61, 62])   # fast, slow, and a passive actor (no activity bit)
def test_members_collecting_and_distributing_in_the_active_aggregator_pass(state):
    bond_state(with_e2(actor_state=state))


def test_a_member_in_the_active_aggregator_but_not_collecting_says_so_and_not_another_lag():
    message = failure(bond_state, with_e2(actor_state=15))
    assert "e2 (switch port 2) is in the active aggregator 1 but LACP on that port is not collecting/distributing " \
           "(actor port state 15)" in message
    assert "flapping or churned partner" in message and "another LAG group" not in message


def test_a_member_in_another_aggregator_is_in_another_lag_group():
    message = failure(bond_state, with_e2(aggregator=2))
    assert "e2 (switch port 2) is in aggregator 2, not in the active one (1)" in message
    assert "another LAG group" in message and "collecting" not in message


@pytest.mark.parametrize("state, words", [
    (7, "not in sync with its partner"),
    (125, "partner went silent"),          # 61 with the defaulted bit
])
def test_other_actor_states_are_read_bit_by_bit(state, words):
    assert words in failure(bond_state, with_e2(actor_state=state))


# --- a node that cannot be reached: the reason line, not paramiko's traceback ------------------

class _Kept(logging.Handler):
    """Every record that reaches the root logger (pytest's log capture is off: pytest.ini)."""

    def __init__(self):
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_failed_ssh_connection_leaves_no_paramiko_traceback_in_the_report(tmp_path, capfd):
    kept = _Kept()
    logging.getLogger().addHandler(kept)
    try:
        with socket.socket() as sshd:
            sshd.bind(("127.0.0.1", 0))
            sshd.listen(1)
            # an sshd that drops each connection before its banner (MaxStartups, tcp wrappers)
            threading.Thread(target=lambda: sshd.accept()[0].close(), daemon=True).start()
            remote, _ = ssh_remote(tmp_path, sshd.getsockname()[1])
            with pytest.raises(NodeUnreachable, match="thor-9 is unreachable: ssh to thor-9: "):
                remote.run("hostname")
    finally:
        logging.getLogger().removeHandler(kept)
    assert not [r.getMessage() for r in kept.records if r.name.startswith("paramiko")]
    assert "Traceback" not in capfd.readouterr().err


def agent_hosts(agent_seconds: list[float]):
    """The pair's hosts where each chat through the agent streams its tokens in the next of
    `agent_seconds` and each chat with the local engine in one second."""
    def answer(request: HttpRequest) -> HttpResponse:
        if request.url.endswith(":8080/v1/chat/completions"):
            return HttpResponse(200, STREAM, 0.05, 0.05 + agent_seconds.pop(0))
        return engine(request)
    engine = http()
    return hosts_of(THOR_PAIR, {"thor-1": answer, "thor-2": engine})


def test_a_comparison_short_once_is_made_again_and_the_better_one_judged_with_the_other_recorded():
    figures = []
    hosts = agent_hosts([1.25, 1.0])   # 0.8 of the local rate, then 1.0
    check, *args = comparison_check(hosts)
    args[3] = lambda *a, **k: figures.append(measure_in(THOR_PAIR)(*a, **k)) or figures[-1]
    check(*args)
    assert [(m.reference, round(m.value, 3), m.verdict) for m in figures if "ratio" in m.reference] == [
        ("remote_ratio.other_attempt", 0.8, None), ("remote_ratio", 1.0, "passed")]


def test_a_comparison_short_twice_fails_naming_the_better_of_the_two():
    message = failure(*comparison_check(agent_hosts([1.25, 1.2])))   # 0.8, then 0.833
    assert "remote/local tokens/s: expected at least 0.9 ratio, found 0.833333 ratio" in message, message
    assert "the better of 2 comparisons" in message


def test_a_stream_short_once_is_asked_again_and_the_better_one_judged_with_the_other_recorded():
    figures = []
    check, *args = agent_check(agent_hosts([6.0, 1.0]))   # 23 tokens after the first: 3.8 tokens/s, then 23
    args[3] = lambda *a, **k: figures.append(measure_in(THOR_PAIR)(*a, **k)) or figures[-1]
    check(*args)
    assert [(m.reference, round(m.value, 1), m.verdict) for m in figures if m.reference.startswith("tokens")] == [
        ("tokens.other_attempt", 3.8, None), ("tokens", 23.0, "passed")]


def test_a_stream_short_twice_fails_naming_the_better_of_the_two():
    message = failure(*agent_check(agent_hosts([6.0, 5.0])))   # 3.8, then 4.6 tokens/s
    assert "tokens/s: expected at least 5 tokens/s, found 4.6 tokens/s (the better of 2 chats)" in message, message
