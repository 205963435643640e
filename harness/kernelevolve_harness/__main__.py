"""`python3 -m kernelevolve_harness evaluate|run-job|describe-spec|inspect|version` (the contract in docs/harness.md)."""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any, Dict, List, Optional

# The judge's numpy needs no BLAS threads; set before numpy is imported anywhere in this process.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .spec import SpecError  # noqa: E402
from .version import content_version  # noqa: E402,F401  (hosts ask for it)


def _clean(x: Any) -> Any:
    """JSON without NaN/Infinity (which JSON.parse rejects)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if hasattr(x, "item"):
        return _clean(x.item())
    return x


def summary(v: Dict[str, Any]) -> str:
    iv = v.get("speedup_interval")
    lines = [v["status"] + (f"  {v['speedup']:.2f}x" + (f" ({iv[0]:.2f}-{iv[1]:.2f})" if iv else "")
                            + "  paired ratio: candidate and baseline timed side by side, geometric mean over shapes"
                            if v.get("speedup") else ""),
             f"  {v['reason']}"]
    for s in v.get("shapes") or []:
        shape = " ".join(f"{k}={x}" for k, x in s["shape"].items())
        lines.append(f"  {shape:<36} baseline {s['baseline_ms']:.4f} ms  candidate {s['candidate_ms']:.4f} ms  "
                     f"{s['speedup']:.2f}x" + (f" ({s['interval'][0]:.2f}-{s['interval'][1]:.2f})" if s.get("interval") else ""))
    for key in ("compile", "profile"):
        facts = {k: x for k, x in (v.get(key) or {}).items() if not isinstance(x, (dict, list))}
        if facts:
            lines.append(f"  {key}: " + " ".join(f"{k}={x}" for k, x in facts.items()))
    if v["status"] != "ok" and v.get("log"):
        lines.append("  log (tail):")
        lines.extend("    " + l for l in v["log"].strip().splitlines()[-15:])
    return "\n".join(lines)


def _warm_owner() -> int:
    """The process whose exit ends the warm-worker server: the one running the judges (a host's CLI, agent or
    Slurm worker), or KERNELEVOLVE_WARM_OWNER for scripts that run many evaluations from short-lived processes;
    KERNELEVOLVE_WARM_OWNER=none: no owner (0), the server lives until idle, for the evaluations that follow."""
    if os.environ.get("KERNELEVOLVE_WARM_OWNER", "").strip().lower() == "none":
        return 0
    try:
        pid = int(os.environ.get("KERNELEVOLVE_WARM_OWNER", ""))
        os.kill(pid, 0)
        return pid
    except (ValueError, ProcessLookupError, PermissionError):
        return os.getppid()


def cmd_evaluate(a: argparse.Namespace) -> int:
    from .judge import Options, evaluate
    from .parent_watch import exit_with_parent
    exit_with_parent()
    opts = Options(spec=a.spec, candidate=a.candidate, baseline=a.baseline, profile=a.profile, lock=a.lock,
                   timeout_scale=a.timeout_scale, warm=not a.no_warm, owner=_warm_owner(), inputs=a.inputs,
                   background=a.background)
    verdict = _clean(evaluate(opts))
    if a.json:
        sys.stdout.write(json.dumps(verdict) + "\n")
    else:
        sys.stdout.write(summary(verdict) + "\n")
    sys.stdout.flush()
    return 0


def cmd_inspect(a: argparse.Namespace) -> int:
    from .kernelbench import spec_for
    from .spec import import_spec, read_header, validate
    a.spec = spec_for(a.spec)  # a KernelBench problem as the spec generated for it
    header = read_header(a.spec)
    info = validate(import_spec(a.spec), a.spec)
    out = {"backend": header.backend, "source": header.source, "kernel": header.kernel, "shapes": info.shapes,
           "outputs": info.outputs, "inplace": info.inplace, "tolerance": info.tolerance,
           "has_reference": info.has_reference, "flops": info.flops, "bytes": info.bytes}
    if a.json:
        print(json.dumps(_clean(out)))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kernelevolve_harness",
                                description="Judges a candidate kernel against its baseline.")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("evaluate", help="judge one candidate and print a verdict")
    e.add_argument("--spec", required=True)
    e.add_argument("--candidate", required=True)
    e.add_argument("--baseline", help="baseline source (default: the spec's SOURCE)")
    e.add_argument("--profile", action="store_true")
    e.add_argument("--json", action="store_true", help="print the verdict as one JSON line")
    e.add_argument("--lock", help="a file to flock while timing, shared by evaluations on one device")
    e.add_argument("--background", action="store_true",
                   help="a re-judgement (a leader's confirmation): evaluations waiting for the --lock without it "
                        "take it first, for at most KERNELEVOLVE_LOCK_YIELD_S (5) seconds")
    e.add_argument("--timeout-scale", type=float, default=1.0, help="multiply every stage timeout by this")
    e.add_argument("--inputs", choices=("wide", "problem"), default="wide",
                   help="wide (default): where the spec's inputs are narrow (all in [0, 1), all non-negative), also "
                        "judge on signed, larger inputs of the same shapes; problem: the problem's inputs alone, as "
                        "KernelBench judges")
    e.add_argument("--no-warm", action="store_true",
                   help="start each worker as a new Python instead of forking it from this host's warm-worker server")
    w = sub.add_parser("warm", help="(started by evaluate) the warm-worker server of one backend on this host")
    w.add_argument("--socket", required=True)
    w.add_argument("--backend", required=True)
    w.add_argument("--owner", type=int, required=True, help="exit when this process exits")
    i = sub.add_parser("inspect", help="print a spec's backend, source, kernel and shapes")
    i.add_argument("--spec", required=True)
    i.add_argument("--json", action="store_true")
    r = sub.add_parser("run-job", help="run one job (JSON: spec, candidate, device, timeout) and print one envelope")
    r.add_argument("--job", help="the job's JSON file (default: read it from stdin)")
    d = sub.add_parser("describe-spec", help="print a spec's header as the harness reads it, as JSON (exit 2 if wrong)")
    d.add_argument("--spec", required=True)
    sub.add_parser("check-host", help="print what this machine offers for judging (python, compilers, GPU, torch)")
    sub.add_parser("version", help="print the harness's content hash")
    sub.add_parser("warm-status", help="print this user's warm-worker servers on this host as JSON")
    a = p.parse_args(argv)
    try:
        if a.command == "evaluate":
            if not os.path.isfile(a.candidate):
                raise SpecError(f"Cannot read the candidate {a.candidate}; check the path given to --candidate.")
            return cmd_evaluate(a)
        if a.command == "inspect":
            return cmd_inspect(a)
        if a.command == "warm-status":
            from .warm import socket_dir, servers
            folder = socket_dir()
            found = servers(folder) if folder else []
            mine = content_version()
            print(json.dumps({"folder": folder, "version": mine, "servers": [
                {k: x[k] for k in ("pid", "backend", "owner", "version", "alive", "idle_s") if k in x}
                for x in found], "warm": any(x["alive"] and x.get("version") == mine for x in found)}))
            return 0
        if a.command == "run-job":
            from .job_runner import main as run_job_main
            return run_job_main(a.job)
        if a.command == "check-host":
            from .host_check import facts as host_facts
            print(json.dumps(host_facts()))
            return 0
        if a.command == "describe-spec":
            from .kernelbench import describe_problem
            from .spec import describe
            facts = describe_problem(a.spec) or describe(a.spec)
            print(json.dumps(_clean(facts)))
            return 0 if facts["ok"] else 2
        if a.command == "warm":
            from .warm import main as warm_main
            return warm_main(a.socket, a.backend, a.owner)
        print(content_version())
        return 0
    except SpecError as e:
        sys.stderr.write(f"kernelevolve_harness: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
