"""`chronyc tracking` as chrony prints it (parsed by rackproof.probes.chrony)."""

from __future__ import annotations


def render_tracking(offset_s: float, reference: str) -> str:
    """chronyc's layout, for the simulated rack (chrony cannot move a namespace's clock)."""
    side = "fast" if offset_s > 0 else "slow"
    return (f"Reference ID    : {reference}\n"
            "Stratum         : 3\n"
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
            "Leap status     : Normal\n")
