"""Warm workers: a per-host server that has already imported what a worker needs (numpy, the harness, and for
the GPU backends torch and triton) and forks one fresh worker per request.

A cold worker is a new Python that imports torch (seconds on a GPU host) before it can judge anything; a warm
worker is a fork of a process that did that once. Every guard still holds, because a warm worker is a worker
like any other: a fresh process per candidate, in its own session and process group, with the judge's
environment, working folder, limits and log file, talking to the judge only over the private pipes the judge
made. The server holds nothing a candidate could use: it never loads a spec, a baseline or a candidate, never
initializes CUDA (a forked CUDA context is unusable, so each worker initializes its own), and hears only the
judges of its own user (its socket lives in a folder only that user can open).

Lifetime: the server exits when its owner (the process that runs the judges: the CLI, the SSH agent, the Slurm
worker) exits, or after KERNELEVOLVE_WARM_IDLE_S seconds (default 300) without a worker. With
KERNELEVOLVE_WARM_OWNER=none it has no owner: it outlives the evaluation that started it, so successive
`evaluate` and `evolve` calls on the host find torch, Triton and the spec's shared reference already loaded,
until it has been idle that long. One per user, host, harness version, Python, backend and import environment;
a server of another harness version for the same user and environment is stopped when a new one starts (its
metadata file, w-KEY.json, says its version), and a connection from another user is refused (SO_PEERCRED), as is
a server run by another user. A judge that closes its connection, or dies, takes its worker's process group with
it.

Set KERNELEVOLVE_WARM=0 (or pass --no-warm to `evaluate`) to start every worker as a new Python instead.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

HARNESS_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The variables that can change what the server's imports do; judges that differ in one of them get servers
# of their own. Every other variable (and CUDA_VISIBLE_DEVICES, read only when a worker initializes CUDA) reaches
# each worker from its own judge.
_IMPORT_ENV = ("PYTHON", "LD_", "TRITON_", "TORCH", "PYTORCH_", "CUDA_", "NVIDIA_", "OMP_", "OPENBLAS_", "MKL_",
               "VIRTUAL_ENV", "CONDA_PREFIX", "PATH")
_PER_JOB = {"CUDA_VISIBLE_DEVICES"}
_START_TIMEOUT_S = 180.0
_MSG = 1 << 20


def enabled() -> bool:
    return os.environ.get("KERNELEVOLVE_WARM", "1").strip().lower() not in ("0", "off", "no", "false")


def preload(backend: str) -> List[str]:
    """Imports a worker would do first; failures are left for the worker to report in its own words."""
    mods = ["numpy", "kernelevolve_harness._worker", "kernelevolve_harness.arrays", "kernelevolve_harness.compare",
            "kernelevolve_harness.op_watch", "kernelevolve_harness.wide_inputs"]
    try:
        from .backends import get_backend
        mods += get_backend(backend).preload_modules()
    except ValueError:
        pass  # an unknown backend: the worker says so in its own words
    loaded = []
    for name in mods:
        try:
            __import__(name)
            loaded.append(name)
        except Exception:
            pass
    if "triton.runtime.cache" in loaded:
        # The key of this Triton installation (a hash of its compiler sources and of libtriton, hundreds of MB),
        # computed once per process at the first compile or cache lookup: once here, every worker inherits it.
        key = getattr(sys.modules["triton.runtime.cache"], "triton_key", None)
        try:
            if callable(key):
                key()
                loaded.append("triton_key")
        except Exception:
            pass
    return loaded


# --- the server ---------------------------------------------------------------------------------------------
class Server:
    def __init__(self, path: str, backend: str, owner: int, idle_s: float) -> None:
        self.path, self.backend, self.owner, self.idle_s = path, backend, owner, idle_s
        self.conns: Dict[int, socket.socket] = {}
        self.pids: Dict[int, int] = {}  # connection fd -> worker pid
        # Shared reference processes (see _worker.SharedReference): key -> (pid, control socket), and the judges
        # connected to one (connection fd -> key); a judge that leaves does not take a shared reference along.
        self.shared: Dict[str, Tuple[int, socket.socket]] = {}
        self.shared_judges: Dict[int, str] = {}
        # Preloaded fork points (Zygote): a spec's key -> the process that imported the spec and its baseline once,
        # and keys where that cannot be done (why), forked from this process as before.
        self.zygotes: Dict[str, Zygote] = {}
        self.no_zygote: Dict[str, str] = self.load_no_zygote()
        # Where a spec's imports cannot be forked past (they start threads or the CUDA driver: Liger's kernels
        # import peft, which does both), workers started ahead that imported them and wait for a judge (Spare):
        # a spare's key (spec, device, limits) -> the spares started or ready.
        self.spares: Dict[str, List[Spare]] = {}
        # the spare key of each judge's own worker while it runs (connection fd -> key), and the most such workers
        # of a key at once: how many spares that key keeps ready (fill_spares)
        self.live: Dict[int, str] = {}
        self.peak: Dict[str, int] = {}
        self.last_busy = time.monotonic()
        self.owner_fd: List[int] = []
        # the descriptors of the request being handled (a judge's channel to its worker): closed in every child
        # started meanwhile that is not that worker (a fork point, a spare), or the judge would not see the
        # worker's end when it dies
        self.inflight: List[int] = []

    def log(self, text: str) -> None:
        sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {text}\n")
        sys.stderr.flush()

    def serve(self) -> int:
        t = time.monotonic()
        # Listening first: a socket that cannot be made fails in milliseconds, and judges that come while the
        # imports run wait in the backlog instead of starting servers of their own.
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.listener.bind(self.path)
        self.listener.listen(64)
        self.inode = os.stat(self.path).st_ino
        self.describe()
        if self.owner == 0:
            self.replace_stale()
        loaded = preload(self.backend)
        if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
            self.refuse("torch initialized CUDA while importing; warm workers cannot be forked from this process")
        threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
        if threads != 1:
            # Forking a process with other threads can copy a lock mid-use; workers would hang at random.
            self.refuse(f"{threads} threads after importing {loaded}; refusing to fork workers from this process")
        signal.signal(signal.SIGTERM, lambda *_: self.stop())
        # A worker's exit wakes the loop at once (its judge may be waiting for the exit code).
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        self.log(f"ready in {time.monotonic() - t:.1f} s (pid {os.getpid()}, owner {self.owner}, "
                 f"preloaded {', '.join(loaded)})")
        # Linux: a descriptor that becomes readable the moment the owner exits (else the owner is polled).
        owner_fd = self.owner_fd
        try:
            owner_fd.append(os.pidfd_open(self.owner))
        except (AttributeError, OSError):
            pass
        while True:
            zsocks = {z.sock: z for z in self.zygotes.values()}
            ssocks = {sp.sock: sp for pool in self.spares.values() for sp in pool}
            ready, _, _ = select.select([self.listener, self.wake_r, *owner_fd, *self.conns.values(), *zsocks,
                                         *ssocks], [], [], 0.5)
            for s in ready:
                if owner_fd and s == owner_fd[0]:
                    continue  # handled by the owner check below
                if s in zsocks:
                    self.on_zygote(zsocks[s])
                elif s in ssocks:
                    self.on_spare(ssocks[s])
                elif s is self.wake_r:
                    try:
                        os.read(self.wake_r, 4096)
                    except BlockingIOError:
                        pass
                elif s is self.listener:
                    conn, _ = self.listener.accept()
                    uid = peer_uid(conn)
                    if uid != os.getuid():
                        self.log(f"refused a connection from user {uid}")
                        conn.close()
                        continue
                    self.conns[conn.fileno()] = conn
                else:
                    self.on_message(s)
            self.reap()
            self.retire_zygotes()
            if self.pids or self.conns:
                self.last_busy = time.monotonic()
            if not _alive(self.owner):
                self.log(f"owner {self.owner} exited")
                self.stop()
            if time.monotonic() - self.last_busy > self.idle_s:
                self.log(f"idle for {self.idle_s:.0f} s")
                self.stop()

    def on_message(self, conn: socket.socket) -> None:
        fd = conn.fileno()
        try:
            data, fds, _, _ = socket.recv_fds(conn, _MSG, 4)
        except OSError:
            data, fds = b"", []
        if not data or fd in self.pids or fd in self.shared_judges:
            # the judge is done or gone (or asks twice): its own worker goes too
            for x in fds:
                os.close(x)
            self.drop(fd)
            return
        self.inflight = list(fds)
        try:
            req = json.loads(data)
            if len(fds) != 3:
                raise ValueError(f"expected 3 descriptors, got {len(fds)}")
            # a spec's fork point, started for its first request; requests do not wait for its imports
            self.zygote_for(req)
            if req.get("shared"):
                self.share(conn, req, fds)
                return
            key = _spare_key(req)
            self.live[fd] = key
            self.peak[key] = max(self.peak.get(key, 0), sum(1 for k in self.live.values() if k == key))
            pid, preloaded = self.fork(req, fds)
        except Exception as e:
            for x in fds:
                os.close(x)
            _send(conn, {"error": f"{type(e).__name__}: {e}"})
            self.drop(fd)
            return
        finally:
            self.inflight = []
        for x in fds:
            os.close(x)
        self.pids[fd] = pid
        _send(conn, {"pid": pid, "preloaded": preloaded})

    def lane(self, key: str) -> str:
        """Which of the key's shared references a new judge joins: the one with the fewest judges, or a new one
        when every running one already serves KERNELEVOLVE_JUDGES_PER_REFERENCE (2) judges, up to
        KERNELEVOLVE_MAX_SHARED_REFERENCES (4). One process answers one request at a time: at 12 concurrent
        evaluations, each asking for about 20 reference outputs, a single one queued the judges' checks; on a
        tune's first wave of Liger's SwiGLU (bf16 rows of 11-19k), five judges on one waited 31-36 s each for it,
        a sixth on its own 3.6 s."""
        per = _env_count("KERNELEVOLVE_JUDGES_PER_REFERENCE", 2)
        most = _env_count("KERNELEVOLVE_MAX_SHARED_REFERENCES", 4)
        lanes = [k for k in self.shared if k.split("#", 1)[0] == key]
        load = {k: 0 for k in lanes}
        for k in self.shared_judges.values():
            if k in load:
                load[k] += 1
        if lanes:
            fewest = min(lanes, key=lambda k: (load[k], k))
            if load[fewest] < per or len(lanes) >= most:
                return fewest
        used = {k.split("#", 1)[1] for k in lanes}
        return f"{key}#{next(str(i) for i in range(len(lanes) + 1) if str(i) not in used)}"

    def share(self, conn: socket.socket, req: Dict[str, Any], fds: List[int]) -> None:
        """A judge's channel to a shared reference of its key (see lane): handed to a running one, or to one
        started now (with the first judge's channel, environment and folder)."""
        key = self.lane(str(req["shared"]))
        how = "reused"
        entry = self.shared.get(key)
        handed = False
        if entry is not None:
            try:
                socket.send_fds(entry[1], [b"judge"], fds[:2])
                handed = True
            except OSError:
                pass  # it is exiting; a new one is started
        if not handed:
            ctl, child_ctl = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                pid, preloaded = self.fork(dict(req, socket_dir=os.path.dirname(self.path)), fds, child_ctl, [ctl])
            finally:
                child_ctl.close()
            if entry is not None:
                entry[1].close()
            self.shared[key] = (pid, ctl)
            how = "started"
        for x in fds:
            os.close(x)
        self.shared_judges[conn.fileno()] = key
        _send(conn, {"pid": self.shared[key][0], "shared": how, "preloaded": how == "started" and preloaded})

    def fork(self, req: Dict[str, Any], fds: List[int], ctl: Optional[socket.socket] = None,
             also_close: Optional[List[socket.socket]] = None) -> Tuple[int, bool]:
        """A worker forked from the spec's fork point where it has one ready (True), else from this process."""
        key = _preload_key(req)
        z = self.zygotes.get(key)
        if z is not None and z.state == "ready":
            pid = z.fork(req, fds + ([ctl.fileno()] if ctl is not None else []), self.exited)
            if pid is not None:
                return pid, True
            self.zygote_gone(z)
        if key and key in self.no_zygote:
            sp = self.take_spare(req)
            handed = sp is not None and sp.hand(req, fds + ([ctl.fileno()] if ctl is not None else []))
            self.fill_spares(req)  # for the next requests (after the hand-over: it closed its end of that one)
            if handed and sp is not None:
                return sp.pid, True
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            others = [c for _, c in self.shared.values()] + (also_close or [])
            # none of the server's sockets: a candidate holding a spare's or a fork point's could send it a job
            _become_worker(req, fds, [self.listener, *self.conns.values(), *others, *self.zygote_socks(),
                                      *self.spare_socks()], [self.wake_r, self.wake_w, *self.owner_fd], ctl)
        return pid, False

    # --- spares: workers started ahead, past a spec's imports -----------------------------------------------
    def take_spare(self, req: Dict[str, Any]) -> Optional["Spare"]:
        pool = self.spares.get(_spare_key(req)) or []
        sp = next((x for x in pool if x.state == "ready"), None)
        if sp is not None:
            pool.remove(sp)
        return sp

    def fill_spares(self, req: Dict[str, Any]) -> None:
        """Spares for the request's spec, device and limits, started or ready, up to as many as its judges ran
        workers at once (at most KERNELEVOLVE_SPARES, 8): a search asks in waves (a tune's first wave, then its
        closing tables and their confirmations together), and each request of a wave that finds no spare ready
        pays the imports itself (on the H200, a Liger worker's 6-9 s, beside the others' checks)."""
        key = _spare_key(req)
        pool = self.spares.setdefault(key, [])
        want = min(_env_count("KERNELEVOLVE_SPARES", 8), max(1, self.peak.get(key, 1)))
        while len(pool) < want:
            pid, mine = self.start_child(_spare_main, req)
            pool.append(Spare(key, pid, mine))

    def start_child(self, main: Callable[..., None], req: Dict[str, Any]) -> Tuple[int, socket.socket]:
        """A fork point or a spare: a child of this process with a folder of its own, talking to it over a
        socket pair (its end returned with its pid); none of this process's other descriptors stay open in it."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            mine.close()
            others = [c for _, c in self.shared.values()]
            main(theirs, req, _preload_home(os.path.dirname(self.path), os.getpid()),
                 [self.listener, *self.conns.values(), *others, *self.zygote_socks(), *self.spare_socks()],
                 [self.wake_r, self.wake_w, *self.owner_fd, *self.inflight])
        theirs.close()
        return pid, mine

    def spare_socks(self) -> List[socket.socket]:
        return [sp.sock for pool in self.spares.values() for sp in pool]

    def on_spare(self, sp: "Spare") -> None:
        msg = sp.read()
        if msg is not None and "ready" in msg:
            sp.state = "ready"
            sp.last_used = time.monotonic()
            return
        self.log(f"spare pid {sp.pid} ended: {(msg or {}).get('unusable', 'it exited')}")
        self.drop_spare(sp)

    def drop_spare(self, sp: "Spare") -> None:
        pool = self.spares.get(sp.key) or []
        if sp in pool:
            pool.remove(sp)
        _kill_group(sp.pid)
        sp.sock.close()
        shutil.rmtree(_preload_home(os.path.dirname(self.path), sp.pid), ignore_errors=True)

    def no_zygote_path(self) -> str:
        """Shared by the servers of this version, Python, backend and import environment, whatever their owner
        (a CLI's server lives as long as one command)."""
        return os.path.join(os.path.dirname(self.path),
                            f"no-fork-point-{server_key(self.backend, 0, dict(os.environ))}.json")

    def load_no_zygote(self) -> Dict[str, str]:
        """What earlier servers found cannot be forked past (no_zygote_path): a spec's workers then start as
        spares from its first request, without trying again."""
        try:
            with open(self.no_zygote_path()) as f:
                found = json.load(f)
            return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
        except (OSError, ValueError):
            return {}

    def save_no_zygote(self) -> None:
        tmp = f"{self.no_zygote_path()}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w") as f:
                json.dump(self.no_zygote, f)
            os.replace(tmp, self.no_zygote_path())
        except OSError:
            pass

    # --- preloaded fork points ----------------------------------------------------------------------------
    def zygote_socks(self) -> List[socket.socket]:
        return [z.sock for z in self.zygotes.values()]

    def zygote_for(self, req: Dict[str, Any]) -> Optional["Zygote"]:
        """The fork point of the request's spec and baseline: started now for the first request that names one
        (at most KERNELEVOLVE_MAX_PRELOADED at once, the idle ones retired first); None where it cannot be had."""
        key = _preload_key(req)
        if not key or key in self.no_zygote:
            return None
        z = self.zygotes.get(key)
        if z is None:
            most = _env_count("KERNELEVOLVE_MAX_PRELOADED", 8)
            if len(self.zygotes) >= most:
                idle = [x for x in self.zygotes.values() if x.state == "ready" and not x.children]
                if not idle:
                    return None
                self.retire(min(idle, key=lambda x: x.last_used))
            z = self.start_zygote(key, req)
        z.last_used = time.monotonic()
        return z

    def start_zygote(self, key: str, req: Dict[str, Any]) -> "Zygote":
        pid, mine = self.start_child(_zygote_main, req)
        z = Zygote(key, pid, mine, req)
        self.zygotes[key] = z
        self.log(f"preloading {req['preload'].get('spec')} (fork point pid {pid})")
        return z

    def on_zygote(self, z: "Zygote") -> None:
        msg = z.read()
        if msg is None:
            self.zygote_gone(z)
        elif "exit" in msg:
            z.children.discard(int(msg["exit"]))
            self.exited(int(msg["exit"]), int(msg["code"]))
        elif "ready" in msg or "unusable" in msg:
            if "ready" in msg:
                z.state = "ready"
                self.log(f"fork point pid {z.pid} ready in {float(msg['ready']):.1f} s")
            else:
                self.no_zygote[z.key] = str(msg["unusable"])
                self.save_no_zygote()
                self.log(f"no fork point for {z.key}: {msg['unusable']}; its workers start as spares"
                         + (f", the first of them pid {z.pid}, which did the imports" if msg.get("spare") else ""))
                if msg.get("spare"):  # it did the imports, and waits for one judge's job like a spare
                    del self.zygotes[z.key]
                    sp = Spare(_spare_key(z.req), z.pid, z.sock)
                    sp.state = "ready"
                    self.spares.setdefault(sp.key, []).append(sp)
                else:
                    self.zygote_gone(z)
                # the requests of the wave that came while it imported were forked and paid the imports: as many
                # spares as that wave had workers are started for the next one
                self.fill_spares(z.req)

    def zygote_gone(self, z: "Zygote") -> None:
        """A fork point that exited or broke: its workers died with it (they die with their parent); later
        requests of its spec are forked from this process, or a new fork point is tried."""
        if self.zygotes.get(z.key) is not z:
            return
        del self.zygotes[z.key]
        self.end_zygote(z)
        for pid in list(z.children):
            _kill_group(pid)
            self.exited(pid, -signal.SIGKILL)
        z.children.clear()
        if z.state == "starting" and z.key not in self.no_zygote:
            self.no_zygote[z.key] = "its fork point exited while importing"

    def retire(self, z: "Zygote") -> None:
        self.log(f"fork point pid {z.pid} retired (idle)")
        self.zygotes.pop(z.key, None)
        self.end_zygote(z)

    def end_zygote(self, z: "Zygote") -> None:
        _kill(z.pid)
        z.sock.close()
        shutil.rmtree(_preload_home(os.path.dirname(self.path), z.pid), ignore_errors=True)

    def retire_zygotes(self) -> None:
        idle_s = float(os.environ.get("KERNELEVOLVE_PRELOADED_IDLE_S", "120"))
        now = time.monotonic()
        for z in list(self.zygotes.values()):
            if z.state == "ready" and not z.children and now - z.last_used > idle_s:
                self.retire(z)
        for pool in list(self.spares.values()):
            for sp in list(pool):
                if sp.state == "ready" and now - sp.last_used > idle_s:
                    self.log(f"spare pid {sp.pid} retired (idle)")
                    self.drop_spare(sp)

    def reap(self) -> None:
        for pid, code in _reaped():
            z = next((x for x in self.zygotes.values() if x.pid == pid), None)
            if z is not None:
                self.zygote_gone(z)
                continue
            self.exited(pid, code)

    def exited(self, pid: int, code: int) -> None:
        """A worker's exit (this process's child, or a fork point's): its judge hears the code."""
        for pool in self.spares.values():
            for sp in list(pool):
                if sp.pid == pid:
                    self.drop_spare(sp)
        for key, (p, ctl) in list(self.shared.items()):
            if p == pid:
                del self.shared[key]
                ctl.close()
                shutil.rmtree(_reference_home(os.path.dirname(self.path), pid), ignore_errors=True)
                for fd, k in self.shared_judges.items():
                    if k == key and fd in self.conns:
                        _send(self.conns[fd], {"exit": code})
        for fd, p in list(self.pids.items()):
            if p == pid:
                del self.pids[fd]
                conn = self.conns.get(fd)
                if conn is not None:
                    _send(conn, {"exit": code})
                    # The worker is gone; the judge may still read the exit code, then closes.

    def drop(self, fd: int) -> None:
        self.shared_judges.pop(fd, None)
        self.live.pop(fd, None)
        pid = self.pids.pop(fd, None)
        if pid is not None:
            _kill_group(pid)
        conn = self.conns.pop(fd, None)
        if conn is not None:
            conn.close()

    def describe(self) -> None:
        """w-KEY.json beside the socket: who serves it (what `warm-status` and later servers read)."""
        from .version import content_version
        info = {"pid": os.getpid(), "uid": os.getuid(), "version": content_version(), "backend": self.backend,
                "owner": self.owner, "slot": slot_key(self.backend, self.owner, dict(os.environ)),
                "started": time.time(), "idle_s": self.idle_s}
        tmp = self.path[:-5] + ".json.tmp"
        with open(tmp, "w") as f:
            json.dump(info, f)
        os.replace(tmp, self.path[:-5] + ".json")

    def replace_stale(self) -> None:
        """Stops the servers of another harness version in the same slot (user, Python, backend, environment):
        without an owner they would otherwise linger until idle."""
        from .version import content_version
        mine = content_version()
        slot = slot_key(self.backend, self.owner, dict(os.environ))
        for other in servers(os.path.dirname(self.path)):
            if other.get("slot") == slot and other.get("version") != mine and other.get("alive"):
                try:
                    os.kill(int(other["pid"]), signal.SIGTERM)
                    self.log(f"stopped the server of harness version {other.get('version')} (pid {other['pid']})")
                except (OSError, ValueError):
                    pass

    def refuse(self, why: str) -> None:
        """Will never serve on this host as configured: say so once, for every judge to read, and exit."""
        self.log(why)
        with open(self.path[:-5] + ".refused", "w") as f:
            f.write(why + "\n")
        self.stop(1)

    def stop(self, code: int = 0) -> None:
        for fd in list(self.conns):
            self.drop(fd)
        for z in list(self.zygotes.values()):
            self.end_zygote(z)
        for pool in list(self.spares.values()):
            for sp in list(pool):
                self.drop_spare(sp)
        for pid, _ in self.shared.values():
            _kill_group(pid)
            shutil.rmtree(_reference_home(os.path.dirname(self.path), pid), ignore_errors=True)
        try:
            if os.stat(self.path).st_ino == self.inode:
                # the log stays when the server refused to serve: the judges' notes point to it
                for p in (self.path, self.path + ".lock", self.path[:-5] + ".json") + (
                        (self.path[:-5] + ".log",) if code == 0 else ()):
                    os.unlink(p)
        except (OSError, AttributeError):
            pass
        os._exit(code)


# --- preloaded fork points ----------------------------------------------------------------------------------
class Zygote:
    """The server's side of a spec's fork point: a child of the server that imported what every worker of that
    spec imports first (the spec, and the baseline with its libraries: Liger's kernels import peft and with it
    transformers, 11-12 s of every worker's start on the H200), and then forks that spec's workers, so they start
    past those imports. It never sees a candidate (it only forks), initializes no device and runs no thread: the
    workers it forks are like the server's. The server hears its workers' exits from it."""

    def __init__(self, key: str, pid: int, sock: socket.socket, req: Dict[str, Any]) -> None:
        self.key, self.pid, self.sock, self.req = key, pid, sock, req
        self.state = "starting"  # then "ready"; one found unusable is gone
        self.children: set = set()
        self.last_used = time.monotonic()

    def read(self) -> Optional[Dict[str, Any]]:
        return _read(self.sock)

    def fork(self, req: Dict[str, Any], fds: List[int], exited: Any) -> Optional[int]:
        """Asks it for a worker; its pid, or None where the fork point is gone. Exits it reports meanwhile are
        passed on (exited(pid, code))."""
        try:
            socket.send_fds(self.sock, [json.dumps(req).encode()], fds)
            deadline = time.monotonic() + 30.0
            while time.monotonic() < deadline:
                ready, _, _ = select.select([self.sock], [], [], max(0.0, deadline - time.monotonic()))
                msg = self.read() if ready else None
                if msg is None:
                    return None
                if "pid" in msg:
                    self.children.add(int(msg["pid"]))
                    self.last_used = time.monotonic()
                    return int(msg["pid"])
                if "exit" in msg:
                    self.children.discard(int(msg["exit"]))
                    exited(int(msg["exit"]), int(msg["code"]))
        except (OSError, ValueError):
            pass
        return None


class Spare:
    """A worker started ahead for a spec whose imports cannot be forked past: a child of the server that did
    what a worker of that spec does first (its imports: the spec and the baseline, as a fork point would) and
    waits for one judge's job, then becomes that judge's worker. Like a forked worker it is a fresh process that
    no candidate has run in, used once."""

    def __init__(self, key: str, pid: int, sock: socket.socket) -> None:
        self.key, self.pid, self.sock = key, pid, sock
        self.state = "starting"  # then "ready"
        self.last_used = time.monotonic()

    def read(self) -> Optional[Dict[str, Any]]:
        return _read(self.sock)

    def hand(self, req: Dict[str, Any], fds: List[int]) -> bool:
        """Gives it the judge's job and channels; False where it is gone (the judge's worker is forked instead)."""
        try:
            socket.send_fds(self.sock, [json.dumps(req).encode()], fds)
            return True
        except OSError:
            _kill_group(self.pid)
            return False
        finally:
            self.sock.close()


def _read(sock: socket.socket) -> Optional[Dict[str, Any]]:
    """One message from a fork point or a spare; None when it is gone."""
    try:
        data = sock.recv(_MSG)
    except OSError:
        data = b""
    return json.loads(data) if data else None


def _spare_key(req: Dict[str, Any]) -> str:
    """Spares serve requests of the same spec, device and memory limit (their imports ran in that environment)."""
    env = req.get("env") or {}
    return f"{_preload_key(req)}|{env.get('CUDA_VISIBLE_DEVICES', '')}|{bool(req.get('limit_memory'))}"


def _preload_key(req: Dict[str, Any]) -> str:
    pre = req.get("preload") or {}
    return str(pre.get("key") or "")


def _fork_hazard() -> str:
    """Why this process cannot fork workers any more (empty: it can)."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            return "importing them initialized CUDA (a forked CUDA context is unusable)"
    except Exception:
        pass
    if _cuda_driver_initialized():
        return "importing them initialized the CUDA driver (its forks could not use the device)"
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if threads != 1:
        return f"importing them started {threads - 1} thread(s) (a fork can copy a lock mid-use)"
    return ""


def _cuda_driver_initialized() -> bool:
    """Whether the CUDA driver was initialized in this process (cuInit: torch's device count without NVML, a
    library's own driver calls), after which a forked child cannot use the device. Before cuInit every driver
    call answers CUDA_ERROR_NOT_INITIALIZED (3); a process that never loaded the driver never called it."""
    try:
        with open("/proc/self/maps") as f:
            if "libcuda.so" not in f.read():
                return False
        import ctypes
        count = ctypes.c_int(0)
        return ctypes.CDLL("libcuda.so.1").cuDeviceGetCount(ctypes.byref(count)) == 0
    except (OSError, AttributeError):
        return False


def _zygote_main(sock: socket.socket, req: Dict[str, Any], home: str, sockets: List[socket.socket],
                 pipes: List[int]) -> None:
    """In the server's forked child: import the spec and its baseline as a worker would (in the first judge's
    environment, the baseline from a copy in a folder of its own, which outlives that judge's folder), say
    whether this process can still fork workers, then fork them on request."""
    def body() -> int:
        _leave_server(sockets, pipes, (signal.SIGTERM, signal.SIGINT, signal.SIGPIPE))
        from .worker_limits import die_with_parent
        die_with_parent(os.getppid())
        t = time.monotonic()
        why = _import_spec_and_baseline(req, home)
        if why:
            _send(sock, {"unusable": why})
            return 0
        hazard = _fork_hazard()
        if hazard:
            # it cannot fork, but it is a process that did a worker's imports and never saw a candidate: it serves
            # one judge's job, as the first spare (Spare)
            os.setsid()
            from .worker_limits import worker_limits
            worker_limits(bool(req.get("limit_memory")), os.getppid())
            _send(sock, {"unusable": hazard, "spare": True})
            return _serve_one_job(sock)
        _send(sock, {"ready": round(time.monotonic() - t, 3)})
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        while True:
            ready, _, _ = select.select([sock, wake_r], [], [], 1.0)
            if sock in ready:
                try:
                    data, fds, _, _ = socket.recv_fds(sock, _MSG, 4)
                except OSError:
                    data, fds = b"", []
                if not data:
                    return 0  # the server is gone (its workers die with this process)
                job = json.loads(data)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    ctl = socket.socket(fileno=fds[3]) if len(fds) > 3 else None
                    _become_worker(job, fds[:3], [sock], [wake_r, wake_w], ctl)
                for x in fds:
                    os.close(x)
                _send(sock, {"pid": pid})
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
            for pid, code in _reaped():
                _send(sock, {"exit": pid, "code": code})
    _as_child(body)


def _reaped() -> List[Tuple[int, int]]:
    """This process's children that have exited: (pid, exit code, or minus the signal that killed it)."""
    out = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return out
        if pid == 0:
            return out
        out.append((pid, -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)))


def _leave_server(sockets: List[socket.socket], pipes: List[int], signals: Tuple[int, ...]) -> None:
    """In a child of the server: none of its descriptors, its signal wake-up or its handlers."""
    for s in sockets:
        s.close()
    signal.set_wakeup_fd(-1)
    for fd in pipes:
        os.close(fd)
    for sig in signals:
        signal.signal(sig, signal.SIG_DFL)


def _become_worker(req: Dict[str, Any], fds: List[int], sockets: List[socket.socket], pipes: List[int],
                   ctl: Optional[socket.socket] = None) -> None:
    """In the forked child: the same setup a cold worker gets from the judge's Popen, then the worker itself
    (with ctl, a shared reference, which receives the channels of later judges over it)."""
    def body() -> int:
        _worker_process(req, sockets, pipes)
        return _run_worker(req, fds, ctl)
    _as_child(body)


def _as_child(body: Callable[[], int]) -> None:
    """Runs a forked child's body and ends the process with its exit code: it never returns to the server's
    loop, whatever the body raises."""
    code = 1
    try:
        code = body()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _worker_process(req: Dict[str, Any], sockets: List[socket.socket], pipes: List[int]) -> None:
    """What a worker's process is before its job: none of the server's descriptors, default signals, a session
    of its own (the judge kills its group), the resource caps, death with the server."""
    _leave_server(sockets, pipes, (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGPIPE))
    os.setsid()
    from .worker_limits import worker_limits
    worker_limits(bool(req.get("limit_memory")), os.getppid())


def _run_worker(req: Dict[str, Any], fds: List[int], ctl: Optional[socket.socket]) -> int:
    """The judge's job in this process: its log as stdout and stderr, its folder and environment, then the
    worker."""
    to_worker_r, from_worker_w, log = fds
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    if ctl is not None:
        os.environ["KERNELEVOLVE_REFERENCE_CTL"] = str(ctl.fileno())
        os.environ["KERNELEVOLVE_REFERENCE_HOME"] = _reference_home(req["socket_dir"], os.getpid())
    import random
    random.seed()  # not the server's sequence
    sys.argv = ["kernelevolve_harness._worker", str(to_worker_r), str(from_worker_w)]
    from . import _worker
    return _worker.main(sys.argv) or 0


def _import_spec_and_baseline(req: Dict[str, Any], home: str) -> str:
    """In a fork point or a spare: the spec and its baseline imported as a worker would (in the first judge's
    environment, the baseline from a copy in a folder of its own, which outlives that judge's folder); why this
    failed, if it did."""
    pre = req["preload"]
    os.environ.clear()
    os.environ.update(req["env"])
    # torch.cuda.is_available() at import (Liger's kernels ask it) counts devices through NVML, not cuInit
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    try:
        os.chdir(req["cwd"])
        os.makedirs(home, mode=0o700, exist_ok=True)
        artifact = os.path.join(home, os.path.basename(pre["artifact"]))
        for src, dst in ((pre["artifact"], artifact), (pre["artifact"][:-3] + ".so", artifact[:-3] + ".so")):
            if os.path.exists(src):  # a KernelBench problem's C++ baseline is loaded beside its module
                shutil.copyfile(src, dst)
        from . import _worker
        _worker.preload(pre["backend"], pre["spec"], artifact, pre["kernel"])
        return ""
    except BaseException as e:
        return f"importing them failed ({type(e).__name__}: {e}); each worker imports them itself"
    finally:
        os.chdir("/")


def _spare_main(sock: socket.socket, req: Dict[str, Any], home: str, sockets: List[socket.socket],
                pipes: List[int]) -> None:
    """In the server's forked child: a worker's process, the spec's imports, then one judge's job (Spare)."""
    def body() -> int:
        _worker_process(req, sockets, pipes)
        why = _import_spec_and_baseline(req, home)
        if why:
            _send(sock, {"unusable": why})
            return 1
        _send(sock, {"ready": True})
        return _serve_one_job(sock)
    _as_child(body)


def _serve_one_job(sock: socket.socket) -> int:
    """A spare's wait for its judge's job (its pipes, log, folder and environment), then that job."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        data, fds, _, _ = socket.recv_fds(sock, _MSG, 4)
    except OSError:
        data, fds = b"", []
    sock.close()
    if not data:
        return 0  # retired, or the server is gone
    job = json.loads(data)
    ctl = socket.socket(fileno=fds[3]) if len(fds) > 3 else None
    return _run_worker(job, fds[:3], ctl)


def _env_count(name: str, default: int) -> int:
    """A positive count from the environment; anything else is the default (and said once in the log)."""
    text = os.environ.get(name, "").strip()
    try:
        return max(1, int(text)) if text else default
    except ValueError:
        sys.stderr.write(f"{name}={text!r} is not a whole number; using {default}\n")
        os.environ[name] = str(default)
        return default


def _preload_home(folder: str, pid: int) -> str:
    """A fork point's own folder (its copy of the baseline), which the server removes when it ends."""
    return os.path.join(folder, f"preload-{pid}")


def _reference_home(folder: str, pid: int) -> str:
    """A shared reference's own folder (its Triton cache and log), which the server removes when it ends."""
    return os.path.join(folder, f"reference-{pid}")


def _alive(pid: int) -> bool:
    if pid <= 1:
        return True
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _send(conn: socket.socket, msg: Dict[str, Any]) -> None:
    try:
        conn.send(json.dumps(msg).encode())
    except OSError:
        pass


# --- the judge's side ---------------------------------------------------------------------------------------
class WarmChild:
    """A worker forked by the server, standing in for a Popen: pid, wait() and the exit code."""

    def __init__(self, conn: socket.socket, pid: int) -> None:
        self.conn, self.pid = conn, pid
        self.returncode: Optional[int] = None
        self.server_lost = False  # the server went away without reporting the worker's exit (it took it along)
        self.shared = ""  # a shared reference: "started" (by this judge) or "reused"
        self.preloaded = False  # forked past the spec's and the baseline's imports (Zygote)

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.returncode is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            while self.returncode is None:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([self.conn], [], [], left)
                if not ready:
                    raise subprocess.TimeoutExpired("warm worker", timeout or 0)
                try:
                    data = self.conn.recv(_MSG)
                except OSError:
                    data = b""
                if not data:  # the server is gone; so is the worker (it dies with the server)
                    self.returncode = -signal.SIGKILL
                    self.server_lost = True
                    break
                msg = json.loads(data)
                if "exit" in msg:
                    self.returncode = int(msg["exit"])
        return self.returncode

    def close(self) -> None:
        self.conn.close()


def socket_dir() -> Optional[str]:
    """A folder only this user can open; None (cold workers) if it cannot be had."""
    base = os.environ.get("KERNELEVOLVE_WARM_DIR") or os.path.join(
        os.environ.get("XDG_RUNTIME_DIR") or "/tmp", f"kernelevolve-warm-{os.getuid()}")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.lstat(base)
    except OSError:
        return None
    import stat
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return base


def peer_uid(conn: socket.socket) -> int:
    """The user at the other end of a Unix socket (Linux SO_PEERCRED); -1 where it cannot be told."""
    import struct
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return os.getuid()  # no peer credentials here: the private folder is the only check
    try:
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i")))
        return uid
    except OSError:
        return -1


def servers(folder: str) -> List[Dict[str, Any]]:
    """The servers described in a socket folder, each with `alive` (its process runs, as a warm server of this
    user) and `socket` (its path)."""
    out = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        if not (name.startswith("w-") and name.endswith(".json")):
            continue
        try:
            with open(os.path.join(folder, name)) as f:
                info = json.load(f)
            pid = int(info["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        alive = False
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                alive = b"kernelevolve_harness\0warm" in f.read() and os.stat(f"/proc/{pid}").st_uid == os.getuid()
        except OSError:
            alive = _alive(pid) and not os.path.isdir("/proc")
        out.append(dict(info, alive=alive, socket=os.path.join(folder, name[:-5] + ".sock")))
    return out


def slot_key(backend: str, owner: int, env: Dict[str, str]) -> str:
    """server_key without the harness version: servers of one slot differ only in version (one is stale)."""
    return server_key(backend, owner, env, version="")


def server_key(backend: str, owner: int, env: Dict[str, str], version: Optional[str] = None) -> str:
    """One server per harness version, Python, backend, owner and import environment."""
    from .version import content_version
    h = hashlib.sha256()
    for part in (content_version() if version is None else version, sys.executable, backend, str(owner)):
        h.update(part.encode() + b"\0")
    for k in sorted(env):
        if k.startswith(_IMPORT_ENV) and k not in _PER_JOB:
            h.update(f"{k}={env[k]}\0".encode())
    return h.hexdigest()[:20]


def spawn(backend: str, owner: int, env: Dict[str, str], cwd: str, log_fd: int, to_worker_r: int,
          from_worker_w: int, limit_memory: bool, shared: str = "",
          preload: Optional[Dict[str, str]] = None) -> Tuple[Optional[WarmChild], str]:
    """Asks this host's server (started on first use) for a worker. Returns (None, why) when it cannot: the
    judge then starts a cold worker, so a broken server costs seconds, never a verdict."""
    if not hasattr(socket, "send_fds") or not hasattr(socket, "SOCK_SEQPACKET"):
        return None, "this Python or system cannot pass descriptors over a sequenced-packet socket"
    try:
        return _spawn(backend, owner, env, cwd, log_fd, to_worker_r, from_worker_w, limit_memory, shared, preload)
    except OSError as e:  # e.g. a system without AF_UNIX sequenced-packet sockets
        return None, f"the warm-worker socket failed ({e})"


def _spawn(backend: str, owner: int, env: Dict[str, str], cwd: str, log_fd: int, to_worker_r: int,
           from_worker_w: int, limit_memory: bool, shared: str = "",
           preload: Optional[Dict[str, str]] = None) -> Tuple[Optional[WarmChild], str]:
    folder = socket_dir()
    if folder is None:
        return None, "no private folder for the warm-worker socket"
    key = server_key(backend, owner, env)
    path = os.path.join(folder, f"w-{key}.sock")
    try:
        with open(path[:-5] + ".refused") as f:
            return None, f"the warm-worker server refused to serve here: {f.read().strip()}"
    except OSError:
        pass
    conn = _connect(path)
    if conn is None:
        conn, why = _start(path, backend, owner, env)
        if conn is None:
            return None, why
    req = {"cwd": cwd, "env": env, "limit_memory": limit_memory, "shared": shared, "preload": preload or {}}
    try:
        socket.send_fds(conn, [json.dumps(req).encode()], [to_worker_r, from_worker_w, log_fd])
        # a first request of a spec waits for its fork point's imports (seconds, more on a loaded host)
        ready, _, _ = select.select([conn], [], [], _START_TIMEOUT_S if preload else 30.0)
        data = conn.recv(_MSG) if ready else b""
        msg = json.loads(data) if data else {"error": "the warm-worker server did not answer"}
    except (OSError, ValueError) as e:
        conn.close()
        return None, f"the warm-worker server failed ({e})"
    if "pid" not in msg:
        conn.close()
        return None, str(msg.get("error"))
    child = WarmChild(conn, int(msg["pid"]))
    child.shared = str(msg.get("shared") or "")
    child.preloaded = bool(msg.get("preloaded"))
    return child, ""


def _connect(path: str) -> Optional[socket.socket]:
    """A connection to the server at path, if one of this user's serves it (another user's is never used)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(path)
    except OSError:
        s.close()
        return None
    if peer_uid(s) != os.getuid():
        s.close()
        return None
    return s


def _start(path: str, backend: str, owner: int, env: Dict[str, str]) -> Tuple[Optional[socket.socket], str]:
    """One judge starts the server while the others wait on the lock, then all connect."""
    with open(path + ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = _connect(path)
        if conn is not None:
            return conn, ""
        log_path = path[:-5] + ".log"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "kernelevolve_harness", "warm", "--socket", path, "--backend", backend,
                 "--owner", str(owner)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd="/", env=env, start_new_session=True)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return None, f"the warm-worker server exited with code {proc.returncode} (see {log_path})"
            conn = _connect(path)
            if conn is not None:
                return conn, ""
            time.sleep(0.05)
        proc.kill()
        return None, f"the warm-worker server was not ready after {_START_TIMEOUT_S:.0f} s (see {log_path})"


def main(socket_path: str, backend: str, owner: int) -> int:
    idle = float(os.environ.get("KERNELEVOLVE_WARM_IDLE_S", "300"))
    return Server(socket_path, backend, owner, idle).serve()
