"""In-house accelerators: the user's own toolchain builds the kernel, the device's runtime launcher runs it.

The spec (TOOLCHAIN) or the host's config (the job's "toolchain", which reaches the judge as the environment
variable KERNELEVOLVE_TOOLCHAIN, field by field over the spec's) names:

  compile    the command that builds SOURCE into a shared library exporting KERNEL (a C ABI entry the spec's
             launch calls through ctypes); {source}, {output}, {kernel} and {workdir} are filled in
  run        the command prefix a worker process runs under (the device's runtime launcher, e.g.
             ["mtia-run", "--"]); it must exec the command that follows it, keeping its file descriptors
  knowledge  a folder of notes for this hardware (markdown, tune-*.json), relative to the spec
  hardware   the hardware's name: a run's hardware (for the notes and the tuner) when no host names one

Everything else is the C++ backend's: the same static rules (differential, so a device header the baseline
includes is allowed), the imported-symbol check of the built library, and the same guards in the same workers,
timed on the host clock around each call (the launch must return when the device is done).
"""
from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import subprocess
import time
import uuid
from typing import Any, Dict, List, Optional

from .base import BackendError, Build, run_tool
from .cpp import CppBackend

NAMES = ("custom",)
ENV = "KERNELEVOLVE_TOOLCHAIN"
FIELDS = ("compile", "run", "knowledge", "hardware")
EXAMPLE = ('TOOLCHAIN = {"compile": ["my-cc", "{source}", "-shared", "-o", "{output}"], '
           '"run": ["my-run", "--"]}')


class ToolchainError(BackendError):
    """The toolchain is not named, or not usable: the user's to fix (a spec error, exit 2)."""


def _command(value: Any, field: str, where: str) -> List[str]:
    if isinstance(value, str):
        value = shlex.split(value)
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ToolchainError(f'{where}: the toolchain\'s "{field}" must be a command, a list of strings or one '
                             f"string; got {value!r}. Write e.g. {EXAMPLE}.")
    return value


def spec_toolchain(spec_path: str) -> Dict[str, Any]:
    """TOOLCHAIN as the spec writes it (a literal dict at module level), without importing the spec."""
    with open(spec_path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=spec_path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TOOLCHAIN" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                raise ToolchainError(f"{os.path.basename(spec_path)}: TOOLCHAIN must be a literal dict (commands as "
                                     f"lists of strings), not computed; write e.g. {EXAMPLE}.")
            if not isinstance(value, dict):
                raise ToolchainError(f"{os.path.basename(spec_path)}: TOOLCHAIN must be a dict; write e.g. {EXAMPLE}.")
            return value
    return {}


def resolve(spec_path: str, host: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The toolchain of this spec on this host: the spec's TOOLCHAIN, with the host's fields over it. Relative
    programs (a path with a slash) and the knowledge folder resolve against the spec's folder."""
    where = os.path.basename(spec_path)
    merged: Dict[str, Any] = dict(spec_toolchain(spec_path))
    merged.update({k: v for k, v in (host or {}).items() if v is not None})
    unknown = sorted(set(merged) - set(FIELDS))
    if unknown:
        raise ToolchainError(f"{where}: the toolchain has fields this harness does not know: {', '.join(unknown)}; "
                             f"use {', '.join(FIELDS)}.")
    base = os.path.dirname(os.path.abspath(spec_path))
    out: Dict[str, Any] = {"knowledge": None, "hardware": None}
    for field in ("compile", "run"):
        if field in merged:
            cmd = _command(merged[field], field, where)
            if cmd and "/" in cmd[0] and not os.path.isabs(cmd[0]):
                cmd = [os.path.normpath(os.path.join(base, cmd[0])), *cmd[1:]]
            out[field] = cmd
    if isinstance(merged.get("knowledge"), str):
        out["knowledge"] = os.path.normpath(os.path.join(base, os.path.expanduser(merged["knowledge"])))
    if isinstance(merged.get("hardware"), str):
        out["hardware"] = merged["hardware"]
    return out


def host_toolchain() -> Dict[str, Any]:
    text = os.environ.get(ENV, "").strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        raise ToolchainError(f"{ENV} is not JSON; it holds the host's toolchain, e.g. "
                             f'{{"compile": ["my-cc", "{{source}}", "-o", "{{output}}"], "run": ["my-run", "--"]}}.')
    if not isinstance(value, dict):
        raise ToolchainError(f"{ENV} must hold a JSON object with compile and run.")
    return value


def _program(cmd: List[str], field: str) -> None:
    if not cmd:
        raise ToolchainError(f'The toolchain\'s "{field}" command is empty; name the program, e.g. {EXAMPLE}.')
    found = shutil.which(cmd[0]) if "/" not in cmd[0] else (cmd[0] if os.access(cmd[0], os.X_OK) else None)
    if not found:
        raise ToolchainError(f'The toolchain\'s "{field}" program {cmd[0]} is not found or not executable on this '
                             f"host; install it, or fix the command in the spec's TOOLCHAIN or the host's "
                             f'"toolchain" setting.')


class CustomBackend(CppBackend):
    name = "custom"
    suffix = ".cpp"
    exports_kernel = True
    # Workers start under the device's runtime launcher, which the warm-worker server (a fork of one Python)
    # would bypass: they start cold.
    warm_workers = False

    def __init__(self) -> None:
        self.toolchain: Dict[str, Any] = {}

    def describe(self, spec_path: str) -> Dict[str, Any]:
        return {"toolchain": resolve(spec_path, host_toolchain())}

    def configure(self, spec_path: str) -> None:
        toolchain = resolve(spec_path, host_toolchain())
        missing = [f for f in ("compile", "run") if f not in toolchain]
        if missing:
            raise ToolchainError(
                f'{os.path.basename(spec_path)}: BACKEND "custom" needs the toolchain\'s {" and ".join(missing)} '
                f"command{'s' if len(missing) > 1 else ''}: write {EXAMPLE} in the spec, or set \"toolchain\" in "
                f"the host's config.")
        _program(toolchain["compile"], "compile")
        if toolchain["run"]:
            _program(toolchain["run"], "run")
        self.toolchain = toolchain

    def build(self, source: str, out_dir: str, timeout: float, kernel: str, cache: bool = False,
              extra_flags: Optional[List[str]] = None) -> Build:
        # Never cached: the toolchain is the user's, and what its output depends on is not known here.
        out = os.path.join(out_dir, f"k_{uuid.uuid4().hex}.so")
        os.makedirs(out_dir, exist_ok=True)
        fill = {"source": os.path.abspath(source), "output": out, "kernel": kernel, "workdir": out_dir}
        cmd = [part.format(**fill) for part in self.toolchain["compile"]]
        t0 = time.monotonic()
        try:
            r = run_tool(cmd, timeout=timeout, scratch=out_dir, cwd=out_dir)
        except subprocess.TimeoutExpired:
            return Build(ok=False, timed_out=True, log=f"{cmd[0]} ran past {timeout:.0f} s")
        except OSError as e:
            return Build(ok=False, log=f"cannot run the toolchain's compile command {cmd[0]}: {e}")
        log = (r.stdout + r.stderr).strip()
        stats: Dict[str, Any] = {"compiler": os.path.basename(cmd[0]), "compile_s": round(time.monotonic() - t0, 3),
                                 "warnings": sum(": warning:" in line for line in log.splitlines())}
        if r.returncode != 0:
            first = next((line for line in log.splitlines() if "error" in line.lower()), "")
            why = f"error: {cmd[0]} exited with code {r.returncode}" + (f": {first}" if first else "")
            return Build(ok=False, log=f"{why}\n{log}" if log else why, stats=stats)
        if not os.path.isfile(out):
            return Build(ok=False, stats=stats, log=f"error: the toolchain's compile command exited 0 but wrote no "
                                                    f"{os.path.basename(out)}; it must write the library to {{output}}.\n{log}")
        return Build(ok=True, artifact=out, stats=stats, log=log)

    def worker_command(self, python_command: List[str]) -> List[str]:
        return [*self.toolchain.get("run", []), *python_command]


def make(name: str) -> CustomBackend:
    return CustomBackend()
