"""`chronyc tracking` as chrony prints it (parsed by rackproof.probes.chrony)."""

from __future__ import annotations

import math


def render_tracking(offset_s: float, reference: str, stratum: int = 3, leap_status: str = "Normal") -> str:
    """chronyc's layout, for the simulated rack (chrony cannot move a namespace's clock). The lines
    no check reads hold the values of chronyc(1)'s example; "slow" or "fast" follows the offset's
    sign, a zero's too (chrony prints 0.000000000 either way)."""
    side = "fast" if math.copysign(1.0, offset_s) > 0 else "slow"
    return (f"Reference ID    : {reference}\n"
            f"Stratum         : {stratum}\n"
            "Ref time (UTC)  : Fri Dec 04 09:49:17 2026\n"
            f"System time     : {abs(offset_s):.9f} seconds {side} of NTP time\n"
            "Last offset     : -0.000006747 seconds\n"
            "RMS offset      : 0.000035822 seconds\n"
            "Frequency       : 3.225 ppm slow\n"
            "Residual freq   : -0.000 ppm\n"
            "Skew            : 0.129 ppm\n"
            "Root delay      : 0.013639022 seconds\n"
            "Root dispersion : 0.001100737 seconds\n"
            "Update interval : 64.2 seconds\n"
            f"Leap status     : {leap_status}\n")
