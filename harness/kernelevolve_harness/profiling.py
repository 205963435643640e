"""`--profile`: what the compiler and the timings say (CPU), or Nsight Compute metrics (NVIDIA), and a
bottleneck class (memory-, compute- or latency-bound) with the roofline position when FLOPS/BYTES are given."""
from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional

NCU_METRICS = [
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread",
    "lts__t_sector_hit_rate.pct",
    "gpu__time_duration.sum",
]
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
STALLS = ["long_scoreboard", "short_scoreboard", "barrier", "membar", "mio_throttle", "lg_throttle", "math_pipe_throttle",
          "wait", "not_selected", "selected", "no_instruction", "dispatch_stall", "drain", "imc_miss", "branch_resolving",
          "sleeping", "tex_throttle", "misc"]


def roofline(rows: List[Dict[str, Any]], flops: List[Optional[float]], nbytes: List[Optional[float]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    r0 = rows[0]
    f, b = flops[0] if flops else None, nbytes[0] if nbytes else None
    secs = r0["candidate_ms"] / 1000.0
    if f:
        out["gflops"] = round(f / secs / 1e9, 2)
    if b:
        out["gbytes_per_s"] = round(b / secs / 1e9, 2)
    if f and b:
        out["arithmetic_intensity"] = round(f / b, 3)
    return out


def classify(mem_pct: Optional[float], sm_pct: Optional[float]) -> str:
    if mem_pct is None or sm_pct is None:
        return "unknown"
    if max(mem_pct, sm_pct) < 40.0:
        return "latency-bound"
    return "memory-bound" if mem_pct >= sm_pct else "compute-bound"


def number(text: str) -> Optional[float]:
    try:
        return float(text.replace(",", "").strip())
    except ValueError:
        return None


def parse_ncu_csv(text: str) -> Dict[str, float]:
    """The first kernel row of `ncu --csv --page raw` (header, units row, values; thousands separators)."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(rows) < 2:
        return {}
    head = rows[0]
    data = next((r for r in rows[1:] if r and r[0].strip().isdigit()), rows[-1])
    out: Dict[str, float] = {}
    for k, v in zip(head, data):
        x = number(v)
        if x is not None:
            out[k] = x
    return out


def ncu_profile(judge: Any, extra_env: Dict[str, str]) -> Dict[str, Any]:
    ncu = shutil.which("ncu") or ("/usr/local/cuda/bin/ncu" if os.path.exists("/usr/local/cuda/bin/ncu") else None)
    if not ncu:
        return {"ncu": "not found"}
    metrics = NCU_METRICS + [f"{STALL_PREFIX}{s}" for s in STALLS]
    artifact = judge.profile_artifact
    cmd = [ncu, "--clock-control", "none", "--csv", "--page", "raw", "-k", f"regex:{judge.header.kernel}", "-c", "1",
           "--metrics", ",".join(metrics), sys.executable, "-m", "kernelevolve_harness._profile_run",
           judge.header.path, judge.header.backend, artifact, judge.header.kernel]
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env.update(extra_env)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300 * judge.scale, env=env,
                           cwd=judge.workdir, start_new_session=True)
    except subprocess.TimeoutExpired:
        return {"ncu": "timed out"}
    m = parse_ncu_csv(r.stdout)
    if not m:
        return {"ncu": "no kernel matched", "ncu_log": r.stdout[-800:] + r.stderr[-800:]}
    mem = m.get(NCU_METRICS[0])
    sm = m.get(NCU_METRICS[1])
    stalls = {s: m[f"{STALL_PREFIX}{s}"] for s in STALLS if m.get(f"{STALL_PREFIX}{s}")}
    top = sorted(stalls.items(), key=lambda kv: -kv[1])[:3]
    total = sum(stalls.values()) or 1.0
    return {
        "memory_sol_pct": mem, "sm_sol_pct": sm,
        "achieved_occupancy_pct": m.get(NCU_METRICS[2]), "registers_per_thread": m.get(NCU_METRICS[3]),
        "l2_hit_rate_pct": m.get(NCU_METRICS[4]), "ncu_duration_ns": m.get(NCU_METRICS[5]),
        "top_stalls": [{"reason": k, "pct": round(100.0 * v / total, 1)} for k, v in top],
        "bottleneck": classify(mem, sm),
    }


def cpu_profile(judge: Any, spreads: List[float]) -> Dict[str, Any]:
    return {"vectorized_loops": judge.compile_stats.get("vectorized_loops"),
            "timing_spread_iqr_over_median": round(max(spreads), 4) if spreads else None,
            "bottleneck": "unknown"}


def profile(judge: Any, rows: List[Dict[str, Any]], spreads: List[float]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    out.update(roofline(rows, judge.info.get("flops") or [], judge.info.get("bytes") or []))
    out.update(judge.backend.profile(judge, rows, spreads))
    return out
