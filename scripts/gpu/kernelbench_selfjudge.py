"""Self-judgement of KernelBench problems as published: each problem file's own Model judged as the candidate
against itself by the harness (`python3 -m kernelevolve_harness evaluate --spec P --candidate P`), so every
verdict should be ok at 1.00x; anything else is the harness failing on a published problem (out of memory, a
stage timing out, a guard misfiring).

Problems run side by side where the GPU and the host hold them: each problem's arrays are measured first (its
get_inputs() and Model's forward on torch's meta device: sizes without memory), each gets a share of the GPU
stated to its evaluation (KERNELEVOLVE_DEVICE_MEMORY_BYTES, so its memory plan stays inside the share) and a share
of host memory; the largest start first, the rest fill what is left. Timing stages never overlap (one --lock).
A problem that ran out of memory or was refused beside others is judged again alone, with the whole GPU.

Prints one line per problem as it ends (name, status, speedup, wall seconds) and a summary; writes results.jsonl.
Usage: python3 scripts/gpu/kernelbench_selfjudge.py FOLDER RAWDIR [--jobs N] [--deadline S] [--shard K/N]
       python3 scripts/gpu/kernelbench_selfjudge.py --summary RESULTS.jsonl [RESULTS.jsonl ...]   (one summary)
--shard K/N judges the problems whose place in KernelBench's order is K modulo N (a level in N device calls, each
inside its time limit; the summary of their results files together is the level's).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS = os.path.join(REPO, "harness")
sys.path.insert(0, HARNESS)
from kernelevolve_harness import device_outputs as D  # noqa: E402
from kernelevolve_harness import memory_plan as M  # noqa: E402

GB = 1e9
FLOOR_GPU = 6 * GB  # every evaluation's share at least: CUDA contexts of its processes, cuBLAS/cuDNN workspaces
FLOOR_HOST = 4 * GB
OOM = re.compile(r"out of memory|OutOfMemory|does not fit", re.I)


# --- the problems and their sizes ------------------------------------------------------------------------
def problems(folder: str) -> List[str]:
    """The problem files of a level folder, in KernelBench's order (by the number their names start with)."""
    names = [n for n in os.listdir(folder) if n.endswith(".py") and not n.startswith("_")]

    def number(n: str) -> Tuple[int, str]:
        m = re.match(r"(\d+)_", n)
        return (int(m.group(1)) if m else 10**9, n)

    return [os.path.join(folder, n) for n in sorted(names, key=number)]


def measure(path: str) -> Optional[Tuple[int, int]]:
    """(input bytes, output bytes) of one call, from get_inputs() and Model's forward on the meta device; None
    where that does not work (the problem is then judged alone). A numpy problem (the CPU dry run) is called."""
    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location(f"kb_size_{abs(hash(path))}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if "torch" not in sys.modules:
            inputs = list(module.get_inputs())
            out = module.Model(*module.get_init_inputs()).forward(*inputs)
            return sum(x.nbytes for x in inputs if hasattr(x, "nbytes")), int(getattr(out, "nbytes", 0))
        import torch
        with torch.device("meta"):
            inputs = list(module.get_inputs())
            sizes = [x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor)]
            try:
                model = module.Model(*module.get_init_inputs())
                out = model(*inputs)
                outs = out if isinstance(out, (list, tuple)) else [out]
                returned = sum(o.numel() * o.element_size() for o in outs if isinstance(o, torch.Tensor))
            except Exception:
                returned = max(sizes, default=0)  # the output is usually no larger than the largest input
        return sum(sizes), returned
    except Exception:
        return None


def shares(inputs: int, returned: int) -> Tuple[int, int]:
    """(GPU bytes, host bytes) one evaluation is given. On the GPU, what its two processes hold at once at most:
    the reference's draw and its expected outputs, the worker's pristine inputs, guarded copy, outputs and the
    last call's buffers, a pool entry and a round in flight, and the timed calls' outputs kept on the device for
    comparison there (device_outputs.py): eight sets, measured against the first run of level 1 beside others
    (a 17 GB input once took 96 GB when fingerprinting it made four temporaries of its size). On the host, the
    outputs that cross to it where they are too small to be compared on the device."""
    one = inputs + returned
    gpu = max(FLOOR_GPU, 8 * one + M.GPU_RESERVE + 2 * GB)
    host = max(FLOOR_HOST, 8 * min(returned, D.SHARE_BYTES) + 4 * GB)  # larger outputs stay on the device
    return int(gpu), int(host)


# --- running ----------------------------------------------------------------------------------------------
class Job:
    def __init__(self, path: str, raw: str, gpu: int, host: int, alone: bool, phase: str) -> None:
        self.path, self.raw, self.gpu, self.host, self.alone, self.phase = path, raw, gpu, host, alone, phase
        self.name = os.path.basename(path)[:-3]
        self.proc: Optional[subprocess.Popen] = None
        self.t0 = 0.0

    def start(self, lock: str, stated: Optional[int]) -> None:
        env = dict(os.environ, PYTHONPATH=HARNESS + (os.pathsep + os.environ["PYTHONPATH"]
                                                     if os.environ.get("PYTHONPATH") else ""))
        env.pop(M.MEMORY_ENV, None)
        # every problem is judged once: a reference process shared with later evaluations of the same problem
        # would only wait, holding its device memory, while the next problems need it
        env["KERNELEVOLVE_SHARED_REFERENCE"] = "0"
        if stated:
            env[M.MEMORY_ENV] = str(stated)
        base = os.path.join(self.raw, f"{self.name}.{self.phase}")
        self.out, self.err = open(base + ".json", "w"), open(base + ".log", "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kernelevolve_harness", "evaluate", "--spec", self.path, "--candidate", self.path,
             "--json", "--lock", lock], stdout=self.out, stderr=self.err, env=env, cwd=REPO, start_new_session=True)

    def result(self, killed: bool = False) -> Dict[str, Any]:
        assert self.proc is not None
        wall = time.monotonic() - self.t0
        self.out.close()
        self.err.close()
        with open(self.out.name) as f:
            text = f.read().strip()
        with open(self.err.name) as f:
            log = f.read()
        rec: Dict[str, Any] = {"name": self.name, "phase": self.phase, "wall_s": round(wall, 1),
                               "gpu_share_gb": round(self.gpu / GB, 1), "alone": self.alone}
        if killed:
            rec.update(status="killed", reason=f"still running after {wall:.0f} s; killed by the runner")
        elif self.proc.returncode == 0 and text:
            try:
                v = json.loads(text.splitlines()[-1])
            except ValueError:
                v = {"status": "error", "reason": "the harness printed no JSON verdict"}
            rec.update(status=v.get("status"), reason=v.get("reason", ""), speedup=v.get("speedup"),
                       interval=v.get("speedup_interval"),
                       memory=[s.get("memory") for s in v.get("shapes") or []],
                       stages=v.get("stages"))
            log += "\n" + str(v.get("log") or "")
        elif self.proc.returncode == 2:
            rec.update(status="spec_error", reason=log.strip().splitlines()[-1][:600] if log.strip() else "")
        else:
            rec.update(status="error", reason=f"exit {self.proc.returncode}: {log.strip()[-600:]}")
        rec["oom"] = bool(OOM.search(str(rec.get("reason", "")) + log))
        return rec


def run(folder: str, raw: str, jobs: int, deadline_s: float, per_problem_s: float,
        shard: Tuple[int, int] = (0, 1), only: Optional[List[str]] = None) -> List[Dict[str, Any]]:
    os.makedirs(raw, exist_ok=True)
    total_host = int(_host_available() * 0.8)
    try:
        import torch
        total_gpu = int(torch.cuda.mem_get_info()[1] * 0.95)
    except (ImportError, AssertionError, RuntimeError):  # the CPU dry run (numpy problems): the host's memory
        total_gpu = total_host
    lock = os.path.join(raw, "device.lock")
    t0 = time.monotonic()
    queue: List[Job] = []
    for n, path in enumerate(problems(folder)):
        if n % shard[1] != shard[0] or (only is not None and os.path.basename(path)[:-3] not in only):
            continue
        size = measure(path)
        if size is None:
            queue.append(Job(path, raw, total_gpu, total_host, True, "shared"))
            continue
        gpu, host = shares(*size)
        queue.append(Job(path, raw, min(gpu, total_gpu), min(host, total_host), gpu >= total_gpu, "shared"))
    print(f"{len(queue)} problems measured in {time.monotonic() - t0:.0f} s; GPU {total_gpu / GB:.0f} GB, host "
          f"{total_host / GB:.0f} GB for the evaluations, at most {jobs} at once", flush=True)
    queue.sort(key=lambda j: -j.gpu)  # the largest first: the small ones fill in beside them
    results = _drain(queue, jobs, total_gpu, total_host, lock, t0 + deadline_s, per_problem_s, folder)
    with open(os.path.join(raw, "results.jsonl"), "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(raw, "wall_s"), "w") as f:
        f.write(f"{time.monotonic() - t0:.1f}\n")
    return results


def _brief(r: Dict[str, Any]) -> Dict[str, Any]:
    return {k: r.get(k) for k in ("status", "reason", "wall_s", "oom")}


def _host_available() -> int:
    free, _ = M.free_bytes(gpu=False)
    return free


def _drain(queue: List[Job], jobs: int, total_gpu: int, total_host: int, lock: str, deadline: float,
           per_problem_s: float, folder: str) -> List[Dict[str, Any]]:
    """Runs the queue, at most `jobs` at once within the memory shares. A problem that ran out of memory (or was
    refused for memory) beside others is judged again alone, with the whole GPU, as soon as it is seen: next in
    the queue, the one result kept (with the first try's, as `first`)."""
    running: List[Job] = []
    done: List[Dict[str, Any]] = []
    firsts: Dict[str, Dict[str, Any]] = {}
    while queue or running:
        if time.monotonic() < deadline:
            for job in list(queue):
                used_gpu = sum(j.gpu for j in running)
                used_host = sum(j.host for j in running)
                fits = not running or (len(running) < jobs and not job.alone and not any(j.alone for j in running)
                                       and used_gpu + job.gpu <= total_gpu and used_host + job.host <= total_host)
                if fits:
                    queue.remove(job)
                    job.start(lock, None if job.alone else job.gpu)
                    running.append(job)
        elif queue:
            for job in queue:
                done.append({"name": job.name, "phase": job.phase, "status": "not run",
                             "reason": "the runner's deadline passed first", "wall_s": 0.0, "oom": False})
                _line(done[-1])
            queue = []
        time.sleep(0.2)
        for job in list(running):
            killed = False
            if job.proc.poll() is None:
                if time.monotonic() - job.t0 < per_problem_s:
                    continue
                os.killpg(job.proc.pid, 9)
                job.proc.wait()
                killed = True
            running.remove(job)
            r = job.result(killed)
            if r.get("oom") and job.phase == "shared":
                print(f"-- {job.name}: out of memory beside others; judged again alone", flush=True)
                firsts[job.name] = _brief(r)
                queue.insert(0, Job(os.path.join(folder, job.name + ".py"), job.raw, total_gpu, total_host, True,
                                    "alone"))
                continue
            if job.name in firsts:
                r["first"] = firsts[job.name]
            done.append(r)
            _line(r)
    return done


def _line(r: Dict[str, Any]) -> None:
    x = f'{r["speedup"]:.3f}x' if isinstance(r.get("speedup"), (int, float)) else "-"
    note = "" if r.get("status") == "ok" else "  " + str(r.get("reason", ""))[:160]
    print(f'{r["name"]:<52} {str(r.get("status")):<15} {x:>8} {r.get("wall_s", 0):7.1f} s{note}', flush=True)


# --- the summary --------------------------------------------------------------------------------------------
def summary(results: List[Dict[str, Any]], wall_s: Optional[float]) -> str:
    lines = []
    counts: Dict[str, int] = {}
    for r in results:
        counts[str(r.get("status"))] = counts.get(str(r.get("status")), 0) + 1
    lines.append(f"{len(results)} problems: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items(),
                                                                                        key=lambda kv: -kv[1])))
    oom = [r for r in results if r.get("oom") or (r.get("first") or {}).get("oom")]
    lines.append(f"out of memory or refused for memory: {len(oom)}" + "".join(
        f"\n  {r['name']}: {r.get('status')}" + (f" (first beside others: {r['first'].get('status')})"
                                                 if r.get("first") else "") + f" {str(r.get('reason', ''))[:160]}"
        for r in oom))
    failed = [r for r in results if r.get("status") != "ok"]
    lines.append(f"the problem itself failed (not ok judged against itself): {len(failed)}" + "".join(
        f"\n  {r['name']}: {r.get('status')}: {str(r.get('reason', ''))[:200]}" for r in failed))
    ok = [r for r in results if r.get("status") == "ok" and isinstance(r.get("speedup"), (int, float))]
    off = [r for r in ok if abs(r["speedup"] - 1.0) > 0.03]
    if ok:
        logs = [math.log(r["speedup"]) for r in ok]
        lines.append(f"speedups of the ok ones: geometric mean {math.exp(sum(logs) / len(logs)):.3f}, "
                     f"min {min(r['speedup'] for r in ok):.3f}, max {max(r['speedup'] for r in ok):.3f}; "
                     f"outside 1.00 +- 0.03: {len(off)}" + "".join(f"\n  {r['name']}: {r['speedup']:.3f}x"
                                                                   for r in off))
    judged = sum(r.get("wall_s") or 0.0 for r in results)
    lines.append(f"total wall time {wall_s:.0f} s ({wall_s / 60:.1f} min); the evaluations' own: {judged:.0f} s"
                 if wall_s is not None else f"the evaluations' own wall time: {judged:.0f} s")
    slow = sorted(results, key=lambda r: -(r.get("wall_s") or 0.0))[:10]
    lines.append("slowest ten: " + "".join(f"\n  {r['name']:<52} {r.get('wall_s', 0):7.1f} s  {r.get('status')}"
                                            for r in slow))
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", nargs="?")
    p.add_argument("raw", nargs="?")
    p.add_argument("--jobs", type=int, default=6)
    p.add_argument("--deadline", type=float, default=540.0, help="seconds after which no problem is started")
    p.add_argument("--per-problem", type=float, default=420.0, help="seconds after which a problem is killed")
    p.add_argument("--shard", default="0/1", help="K/N: the problems whose place is K modulo N")
    p.add_argument("--summary", nargs="+", help="print the summary of results.jsonl files together and exit")
    p.add_argument("--rest", help="a results.jsonl of an earlier call: judge only its problems left 'not run'")
    p.add_argument("--only", help="judge only these problems (names without .py, comma-separated)")
    a = p.parse_args(argv)
    if a.summary:
        results, walls = [], []
        for path in a.summary:
            with open(path) as f:
                results += [json.loads(line) for line in f if line.strip()]
            wall_file = os.path.join(os.path.dirname(path), "wall_s")
            if os.path.exists(wall_file):
                with open(wall_file) as f:
                    walls.append(float(f.read()))
        print(summary(results, sum(walls) if len(walls) == len(a.summary) else None))
        return 0
    if not a.folder or not a.raw:
        p.error("give FOLDER and RAWDIR, or --summary FILE")
    t0 = time.monotonic()
    k, n = (int(x) for x in a.shard.split("/"))
    only = None
    if a.rest:
        with open(a.rest) as f:
            only = [r["name"] for r in (json.loads(line) for line in f if line.strip()) if r.get("status") == "not run"]
        print(f"-- the rest of {a.rest}: {len(only)} problems", flush=True)
    if a.only:
        only = (only or []) + [n.strip() for n in a.only.split(",") if n.strip()]
    results = run(a.folder, a.raw, a.jobs, a.deadline, a.per_problem, (k, n), only)
    print()
    print(summary(results, time.monotonic() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
