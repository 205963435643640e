"""`check-host`: what this machine offers for judging candidates, as one JSON object of short facts (the table of
`kernelevolve hosts --check`). The same check runs wherever candidates run: the local machine, an SSH host, and
a Slurm compute node inside a job."""
from __future__ import annotations

import importlib
import os
import platform
import shutil
import subprocess
from typing import Dict, List


def _first_line(argv: List[str], prefer: str = "") -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "failed"
    lines = [l.strip() for l in out if l.strip()]
    preferred = [l for l in lines if prefer and prefer in l]
    return (preferred or lines or ["failed"])[0]


def facts() -> Dict[str, str]:
    out: Dict[str, str] = {"python": platform.python_version(), "host": platform.node(), "cpus": str(os.cpu_count())}
    for cc in ("g++", "nvcc"):
        path = shutil.which(cc)
        # nvcc names its version on the "release" line, g++ on the first
        out[cc] = _first_line([path, "--version"], "release") if path else "missing"
    smi = shutil.which("nvidia-smi")
    out["gpu"] = "none"
    if smi:
        try:
            names = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                                   timeout=30).stdout.split("\n")
            out["gpu"] = ", ".join(n.strip() for n in names if n.strip()) or "none"
        except (OSError, subprocess.SubprocessError):
            out["gpu"] = "failed"
    for module in ("numpy", "torch", "triton"):
        try:
            out[module] = str(importlib.import_module(module).__version__)
        except Exception:  # noqa: BLE001 - a broken install is "missing" for judging purposes
            out[module] = "missing"
    out["warm server"] = warm_servers()
    return out


def warm_servers() -> str:
    """This user's warm-worker servers of this harness version on the machine (warm.py), or "none"."""
    from .version import content_version
    from .warm import servers, socket_dir
    folder = socket_dir()
    mine = content_version()
    live = [s for s in (servers(folder) if folder else []) if s.get("alive") and s.get("version") == mine]
    return ", ".join(f"{s.get('backend')} (pid {s.get('pid')}{', until idle' if s.get('owner') == 0 else ''})"
                     for s in live) or "none"
