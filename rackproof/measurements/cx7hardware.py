"""The hardware behind each CX7 link (rackproof.measuring.nichardware): every function's PCIe link, firmware,
RoCE v2 GID index and MTU, on its own and with the other end of each link."""

from __future__ import annotations

from rackproof.judging import addressing

from rackproof.measuring import nichardware, plan
from rackproof.measuring.plan import Phase

CX7_HARDWARE = plan.each("cx7.hardware", Phase.FACTS, "cx7", lambda cx7, ctx: nichardware.read(cx7.host, cx7.spec))
# each link of the pair, both ends: [(this node's end, the peer's end), ...]
CX7_PAIR_HARDWARE = plan.each("cx7_pair.hardware", Phase.FACTS, "cx7_pair", lambda pair, ctx: [
    (nichardware.read(pair.src, s), nichardware.read(pair.dst, d)) for s, d in addressing.cx7_links(pair.src.spec,
                                                                                                     pair.dst.spec)])
