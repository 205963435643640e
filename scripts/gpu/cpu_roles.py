"""CPU seconds by role during a run, from /proc: where an evaluation's CPU time goes on a busy machine.

Usage: python3 scripts/gpu/cpu_roles.py OUT.json [INTERVAL_S]   (runs until SIGTERM, then writes OUT.json)

Every INTERVAL_S it reads each process's own CPU time (utime + stime) and the CPU time of its reaped children
(cutime + cstime: the Triton compiler's ptxas, which lives for a fraction of a second). A process's role is
decided once, from what it is: the judge (`kernelevolve_harness evaluate`), a worker (its stdout is the
evaluation's reference.log or candidate.log), the warm-worker server, the engine (node), or other. A process
that exits between two samples loses at most one interval of its own time; its children's time is counted
when they are reaped, which the worker does before it answers. The workers are the warm-worker server's
children and the judges the engine's, so those two "(its children)" entries count the same seconds again.
`started_cpu_s` names what the roles start (ptxas, a C compiler), by command.
"""
import json
import os
import signal
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def read_stat(pid):
    with open(f"/proc/{pid}/stat", "rb") as f:
        data = f.read().decode("ascii", "replace")
    comm = data[data.index("(") + 1:data.rindex(")")]
    fields = data[data.rindex(")") + 2:].split()
    # fields[0] is field 3 (state), fields[1] the parent; utime is field 14, stime 15, cutime 16, cstime 17
    own = (int(fields[11]) + int(fields[12])) / TICK
    children = (int(fields[13]) + int(fields[14])) / TICK
    return comm, int(fields[1]), own, children


def role_of(pid, comm):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        cmd = ""
    if "kernelevolve_harness evaluate" in cmd:
        return "judge"
    try:
        out = os.readlink(f"/proc/{pid}/fd/1")
    except OSError:
        out = ""
    worker = ("reference worker" if out.endswith("/reference.log") else
              "candidate worker" if out.endswith("/candidate.log") else "")
    if worker:
        # what a worker starts (the Triton compiler's ptxas, a C compiler) inherits its stdout
        return worker if comm.startswith("python") else f"{worker}: {comm}"
    if "kernelevolve_harness.warm" in cmd or "kernelevolve_harness warm" in cmd:
        return "warm-worker server"
    if comm == "node" or comm.startswith("node"):
        return "engine (node)"
    return "other"


def main():
    out_path = sys.argv[1]
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
    me = os.getpid()
    first = {}  # pid -> (own, children) when first seen
    last = {}  # pid -> (role, own, children)
    parent = {}  # pid -> (parent pid, comm), for naming what the workers and the judge start
    commands = []  # the command lines of the other programs seen (a compiler's, say), first 300
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    t0 = time.time()
    while not stop:
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == me:
                continue
            pid = int(name)
            try:
                comm, ppid, own, children = read_stat(pid)
            except (OSError, ValueError, IndexError):
                continue
            if pid not in last and len(commands) < 300 and time.time() - t0 > interval * 2 and not comm.startswith(("python", "node", "top", "sleep",  # noqa: E501
                                                                                  "nvidia-smi", "bash", "sh")):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        line = f.read().replace(b"\0", b" ").decode("utf-8", "replace")[:400]
                    if line:
                        commands.append(line)
                except OSError:
                    pass
            if pid not in last:
                # a worker's stdout is set before it runs anything; a worker seen too early is looked at again
                first[pid] = (own, children) if time.time() - t0 < interval * 2 else (0.0, 0.0)
                role = role_of(pid, comm)
            else:
                role = last[pid][0]
                if role in ("other", "warm-worker server"):  # a worker is forked from the server, then re-homed
                    role = role_of(pid, comm)
            last[pid] = (role, own, children)
            parent[pid] = (ppid, comm)
        time.sleep(interval)
    totals = {}
    started = {}  # "parent role: command" -> own CPU seconds of the processes the roles above started
    for pid, (role, own, children) in last.items():
        ppid, comm = parent[pid]
        for _ in range(6):  # up the tree: g++ starts cc1plus, the Triton compiler a shell that starts ptxas
            if role != "other" or ppid not in last:
                break
            if last[ppid][0] != "other":
                key = f"{last[ppid][0]}: {comm}"
                started[key] = started.get(key, 0.0) + own - first[pid][0]
                break
            ppid = parent[ppid][0]
        own0, children0 = first[pid]
        totals[role] = totals.get(role, 0.0) + own - own0
        if children - children0 > 0:
            totals[role + " (its children)"] = totals.get(role + " (its children)", 0.0) + children - children0
    with open(out_path, "w") as f:
        json.dump({"t0": t0, "t1": time.time(), "cpu_s": {k: round(v, 2) for k, v in sorted(totals.items())},
                   "started_cpu_s": {k: round(v, 2) for k, v in sorted(started.items())}, "commands": commands}, f)


if __name__ == "__main__":
    main()
