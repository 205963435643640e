"""`check-host`: what this machine offers for judging candidates, as one JSON object of short facts (the table of
`kernelevolve hosts --check`). The same check runs wherever candidates run: the local machine, an SSH host, and
a Slurm compute node inside a job."""
from __future__ import annotations

import functools
import glob
import importlib
import os
import platform
import shutil
import subprocess
from typing import Dict, List, Optional


def _first_line(argv: List[str], prefer: str = "") -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "failed"
    lines = [l.strip() for l in out if l.strip()]
    preferred = [l for l in lines if prefer and prefer in l]
    return (preferred or lines or ["failed"])[0]


@functools.lru_cache(maxsize=None)
def cpu_name() -> str:
    """The CPU's model and the machine's core count, e.g. "AMD EPYC 7763 64-Core Processor (128 cores)": the CPU a
    C++ kernel is judged on, named as `hosts --check` and the panel's winners by hardware name it."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                # x86 names it "model name"; some ARM kernels "Model" or "Hardware" only
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    model = value.strip()
                    break
    except OSError:
        pass
    if not model and platform.system() == "Darwin":
        model = _first_line(["sysctl", "-n", "machdep.cpu.brand_string"])
    if not model or model == "failed":
        model = platform.processor() or platform.machine() or "unknown CPU"
    return f"{' '.join(model.split())} ({os.cpu_count()} cores)"


@functools.lru_cache(maxsize=None)
def gpu_names() -> List[str]:
    """The NVIDIA GPUs' names in PCI bus order (nvidia-smi's order), read from the driver's /proc files (no process
    started, so every job can ask); nvidia-smi where those are not there; [] without an NVIDIA GPU."""
    names = []
    for info in sorted(glob.glob("/proc/driver/nvidia/gpus/*/information")):
        try:
            with open(info, encoding="utf-8", errors="replace") as f:
                names += [l.partition(":")[2].strip() for l in f if l.startswith("Model:")]
        except OSError:
            pass
    smi = shutil.which("nvidia-smi")
    if not names and smi:
        try:
            out = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                                 timeout=30).stdout
            names = [n.strip() for n in out.split("\n") if n.strip()]
        except (OSError, subprocess.SubprocessError):
            pass
    return names


def machine(device: Optional[str] = None) -> Dict[str, str]:
    """What judged a job, for the verdict's envelope: {"cpu": cpu_name(), "gpu": the GPU's name} (no "gpu" without
    one). With several kinds of GPU, `device` (an index as CUDA_VISIBLE_DEVICES gives it) picks one."""
    out = {"cpu": cpu_name()}
    names = gpu_names()
    if len(set(names)) == 1:
        out["gpu"] = names[0]
    elif names:
        index = int(device) if device is not None and device.isdigit() else -1
        out["gpu"] = names[index] if 0 <= index < len(names) else ", ".join(sorted(set(names)))
    return out


def facts() -> Dict[str, str]:
    out: Dict[str, str] = {"python": platform.python_version(), "host": platform.node(), "cpus": str(os.cpu_count()),
                           "cpu": cpu_name()}
    for cc in ("g++", "nvcc"):
        path = shutil.which(cc)
        # nvcc names its version on the "release" line, g++ on the first
        out[cc] = _first_line([path, "--version"], "release") if path else "missing"
    out["gpu"] = ", ".join(gpu_names()) or "none"
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
