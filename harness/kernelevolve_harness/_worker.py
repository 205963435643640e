"""The worker: the only process that runs kernel code. Started by the judge as
`python3 -m kernelevolve_harness._worker READ_FD WRITE_FD` in its own process group, with stdout and stderr
going to a log file. Every message it sends carries the run's nonce, which arrives over the private channel.

Two modes: `reference` (a clean process that never sees the candidate: it validates the spec and serves
expected outputs for (shape, seed, scale) on request) and `candidate` (runs the candidate's correctness calls
and the interleaved timing against the baseline, sending the raw evidence; the judge decides).
"""
from __future__ import annotations

import math
import os
import random
import sys
import time
import traceback
from typing import Any, Dict, List, Optional, Set, Tuple

import numpy as np

from . import arrays as A
from . import kernelbench_timing
from . import memory_plan as M
from .backends import get_backend
from .protocol import BATCH_BYTES, MAX_BATCH, Channel
from .spec import SpecError, import_spec, validate

_perf_counter = time.perf_counter  # captured before any kernel code is loaded


class Worker:
    def __init__(self, chan: Channel, config: Dict[str, Any]) -> None:
        self.chan = chan
        self.cfg = config
        self.nonce = config["nonce"]
        self.backend = get_backend(config["backend"])
        self.backend.enter_worker(config)
        self.spec: Any = None
        self.shapes: List[Dict[str, Any]] = []
        self.outputs: List[int] = list(config.get("outputs") or [])
        self.inplace: List[int] = list(config.get("inplace") or [])
        self.canary = bytes.fromhex(config["canary"]) if config.get("canary") else os.urandom(A.BAND)

    # --- messages -----------------------------------------------------------------------------------
    def send(self, kind: str, blobs: Optional[List[bytes]] = None, **fields: Any) -> None:
        self.chan.send(dict(fields, type=kind, nonce=self.nonce), blobs)

    def recv(self) -> Dict[str, Any]:
        header, _ = self.chan.recv(None)
        return header

    # --- spec helpers ---------------------------------------------------------------------------------
    def load_spec(self) -> None:
        self.spec = import_spec(self.cfg["spec"])
        self.shapes = list(self.spec.SHAPES)

    def make_inputs(self, shape_index: int, seed: int, factor: float) -> List[Any]:
        args = self.spec.inputs(dict(self.shapes[shape_index]), seed)
        args = list(args) if isinstance(args, (tuple, list)) else [args]
        if factor != 1.0:
            # The scaling rule: float arrays (also inside lists, 0-dim ones included) that are not pure outputs
            # are multiplied by the factor; every other value, float scalars included, is passed as inputs()
            # drew it. The reference and the candidate's buffers (refill) apply the same rule to the same draw.
            for j, a in enumerate(args):
                if j not in self.outputs:
                    for leaf in A.leaves(a):
                        if A.is_float(leaf):
                            A.scale(leaf, factor)
        return args

    def wide_inputs(self, shape_index: int, seed: int) -> Tuple[List[Any], str, str]:
        """The robustness pass's inputs for (shape, seed), what was narrow and what replaced it (wide_inputs.py)."""
        from .wide_inputs import widen
        return widen(self.make_inputs(shape_index, seed, 1.0), self.outputs, seed)

    def result_outputs(self, result: Any, args: List[Any]) -> List[Any]:
        outs = [x for o in A.as_output_list(result) for x in (A.leaves(o) if isinstance(o, (list, tuple)) else [o])]
        if not outs:
            outs = [leaf for j in self.outputs + self.inplace if j < len(args) for leaf in A.leaves(args[j])]
        return outs

    def pack_outputs(self, outs: List[Any]) -> Tuple[List[Any], List[str]]:
        """The outputs as .npy blobs, each (header, data); they are sent at once, so the data is not copied."""
        blobs, dtypes = [], []
        for o in outs:
            if A.is_array(o):
                a, name = A.host_numpy(o)
            else:
                a = np.asarray(o)
                name = str(a.dtype)
            if a.dtype == object:
                raise TypeError(f"launch returned {type(o).__name__}, which is not an array or a number")
            blobs.append(A.npy_parts(a))
            dtypes.append(name)
        return blobs, dtypes

    def arg_digests(self, args: List[Any], every: bool = False) -> List[Optional[str]]:
        """Fingerprints of the array arguments that must come back unchanged (all of them with every=True);
        None for the rest, which the judge does not compare."""
        skip = set() if every else set(self.outputs) | set(self.inplace)
        return [("|".join(A.digest(leaf) for leaf in A.leaves(a)) or None) if j not in skip else None
                for j, a in enumerate(args)]

# --------------------------------------------------------------------------------------------------------
class ReferenceWorker(Worker):
    def run(self) -> None:
        if self.start() is None:
            return
        while True:
            req = self.recv()
            if req.get("type") != "ref":
                return
            try:
                self.serve(req)
            except Exception as e:
                self.send("spec_error", message=self.failure(req, e))
                return

    def start(self) -> Optional[Dict[str, Any]]:
        """Validates the spec, loads and probes the baseline, and says "ready" (returning what it said), or sends
        the spec error and returns None."""
        try:
            self.load_spec()
            info = validate(self.spec, self.cfg["spec"])
        except SpecError as e:
            self.send("spec_error", message=str(e))
            return None
        self.outputs = list(info.outputs or [])
        self.inplace = list(info.inplace)
        try:
            kb = self.backend.load(self.cfg["baseline_artifact"], info.kernel)
        except Exception as e:
            self.send("spec_error", message=f"The baseline cannot be loaded: {type(e).__name__}: {e}.")
            return None
        self.kb = kb
        cached = self.backend.cache_snapshot()
        try:
            self.probe(info)
            if self.backend.jit_compiles:
                self.compile_every_shape()
        except SpecError as e:
            self.send("spec_error", message=str(e))
            return None
        M.release(self.backend.gpu, getattr(self, "set_bytes", 0))
        ready = {"info": info.to_json(), "outputs": self.outputs, "inplace": self.inplace,
                 "output_bytes": getattr(self, "output_bytes", 0)}
        self.send("ready", compiled=self.backend.compiled_since(cached), **ready)
        return ready

    def failure(self, req: Dict[str, Any], e: Exception) -> str:
        return (f"The reference failed on shape {self.shapes[req['shape']]} (seed {req['seed']}): "
                f"{type(e).__name__}: {e}. Fix the spec or the baseline.")

    def probe(self, info: Any) -> None:
        """Runs the baseline once: infers OUTPUTS when the spec does not give them, and checks that the baseline
        leaves every other argument unchanged (else the spec must declare it in INPLACE)."""
        where = os.path.basename(self.cfg["spec"])
        try:
            args = self.make_inputs(0, 12345, 1.0)
        except Exception as e:
            raise SpecError(f"{where}: inputs({self.shapes[0]}, seed) failed: {type(e).__name__}: {e}.")
        if not any(A.leaves(a) for a in args):
            raise SpecError(f"{where}: inputs() returned no arrays; it must return the kernel's arguments as a tuple.")
        self.check_layout(where, args)
        before = self.arg_digests(args, every=True)
        try:
            result = self.spec.launch(self.kb, *args)
            self.backend.synchronize()
        except Exception as e:
            raise SpecError(f"{where}: launch() with the baseline failed: {type(e).__name__}: {e}.")
        outs = A.as_output_list(result)
        if info.outputs is None:
            self.outputs = [j for j, a in enumerate(args) if j not in self.inplace and any(
                A.is_array(o) and A.same_storage(leaf, o) for leaf in A.leaves(a) for o in outs)]
        if not outs and not self.outputs and not self.inplace:
            raise SpecError(f"{where}: launch() returns nothing and the spec declares no OUTPUTS; "
                            f"return the output array(s) from launch, or set OUTPUTS = [index, ...].")
        after = self.arg_digests(args, every=True)
        for j, (b, a) in enumerate(zip(before, after)):
            if b is not None and b != a and j not in self.outputs and j not in self.inplace:
                raise SpecError(f"{where}: the baseline changes argument {j}, which is not in OUTPUTS or INPLACE; "
                                f"add {j} to OUTPUTS (written only) or INPLACE (read and written).")
        self.refuse_if_too_large(args, outs)
        self.output_bytes = M.array_bytes(self.result_outputs(result, args))  # the judge asks ahead by this

    def refuse_if_too_large(self, args: List[Any], outs: List[Any]) -> None:
        """A problem that cannot be judged on this device even with one buffer set is refused here, before the
        candidate runs (memory_plan.py)."""
        gpu = self.backend.gpu
        inputs = M.array_bytes(args)
        returned = M.new_output_bytes(outs, args)
        self.set_bytes = inputs + returned
        free, source = M.free_bytes(gpu, held=self.set_bytes)
        why = M.refusal(inputs, self.set_bytes, returned, free, source, gpu)
        if why:
            raise SpecError(why)

    def check_layout(self, where: str, args: List[Any]) -> None:
        """Every set of inputs of a shape must fit the same buffers: the timed calls move each one into buffers
        made for the first (the values beside the arrays travel with their set)."""
        try:
            other = self.make_inputs(0, 12346, 1.0)
        except Exception as e:
            raise SpecError(f"{where}: inputs({self.shapes[0]}, seed) failed: {type(e).__name__}: {e}.")
        if len(other) != len(args) or [A.layout(a) for a in args] != [A.layout(a) for a in other]:
            raise SpecError(f"{where}: inputs() returned arrays of different count, shape or dtype for two seeds of "
                            f"shape {self.shapes[0]}; let the seed change only the values.")

    def compile_every_shape(self) -> None:
        """Calls the baseline once on every shape, so Triton compiles each of its specializations here, in the
        process that never sees a candidate; the judge keeps this cache for the workers of later evaluations."""
        where = os.path.basename(self.cfg["spec"])
        for i in range(1, len(self.shapes)):
            try:
                args = self.make_inputs(i, 12345, 1.0)
                self.spec.launch(self.kb, *args)
                self.backend.synchronize()
            except Exception as e:
                raise SpecError(f"{where}: launch() with the baseline failed on shape {self.shapes[i]}: "
                                f"{type(e).__name__}: {e}.")

    def serve(self, req: Dict[str, Any]) -> None:
        i, seed, factor = req["shape"], req["seed"], req["factor"]
        narrow = wide = ""
        if req.get("wide"):  # the robustness pass: none when no input of this draw is narrow
            args, narrow, wide = self.wide_inputs(i, seed)
            if not narrow:
                self.send("ref", [], key=req["key"], digests=[], dtypes=[], narrow="", wide="")
                return
        else:
            args = self.make_inputs(i, seed, factor)
        digests = self.arg_digests(args)
        if self.spec_has_reference():
            # the inputs' fingerprints are taken, and they are not read again: no copy (one set less in memory)
            result = self.spec.reference(*args)
            outs = A.as_output_list(result)
        else:
            for j in self.outputs:
                for leaf in A.leaves(args[j]):
                    A.poison(leaf)
            result = self.spec.launch(self.kb, *args)
            self.backend.synchronize()
            outs = self.result_outputs(result, args)
        blobs, dtypes = self.pack_outputs(outs)
        self.send("ref", blobs, key=req["key"], digests=digests, dtypes=dtypes, narrow=narrow, wide=wide,
                  cpu_s=round(time.process_time(), 3))
        del args, result, outs, blobs
        M.release(self.backend.gpu, getattr(self, "set_bytes", 0))

    def spec_has_reference(self) -> bool:
        return callable(getattr(self.spec, "reference", None))


# --------------------------------------------------------------------------------------------------------
WRITE_TIMEOUT_S = 60.0  # a judge that takes no answer for this long is dropped (it reads them as they come)


class SharedReference(ReferenceWorker):
    """One reference process for every judge of the same spec, baseline and device on this host, instead of one
    per evaluation: it never sees a candidate, so nothing one evaluation does can reach another through it, and
    its answers depend only on (shape, seed, scale). Started by the warm-worker server for the first judge; later
    judges' channels arrive over the control socket the server keeps. Each judge talks to it over its own pipes
    with its own nonce and reads every answer as it comes (DrainedChannel), so one busy judge holds up no other.
    Exits when no judge has used it for KERNELEVOLVE_REFERENCE_IDLE_S seconds (default 60), or with the server."""

    def run(self) -> None:
        import select
        import shutil
        import signal
        import socket
        import tempfile
        from .protocol import ChannelClosed, ChannelTimeout
        ctl = socket.socket(fileno=int(os.environ.pop("KERNELEVOLVE_REFERENCE_CTL")))
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a judge that left is dropped, not fatal
        home = os.environ.pop("KERNELEVOLVE_REFERENCE_HOME", "") or tempfile.mkdtemp(prefix="kernelevolve-reference-")
        os.makedirs(home, mode=0o700, exist_ok=True)
        try:
            ready = self.start()
            if ready is None:
                return
            ready.update(self.rehome(home))
            first = Channel(self.chan.read_fd, self.chan.write_fd, write_timeout=WRITE_TIMEOUT_S)
            channels: Dict[int, Tuple[Channel, str]] = {first.read_fd: (first, self.nonce)}
            idle_s = float(os.environ.get("KERNELEVOLVE_REFERENCE_IDLE_S", "60"))
            last_used = time.monotonic()

            def drop(fd: int) -> None:
                chan, _ = channels.pop(fd)
                chan.close()

            while channels or time.monotonic() - last_used < idle_s:
                readable, _, _ = select.select([ctl, *channels], [], [], 1.0)
                for r in readable:
                    if r is ctl:
                        try:
                            data, fds, _, _ = socket.recv_fds(ctl, 64, 2)
                        except OSError:
                            return
                        if not data:
                            return  # the server is gone
                        chan = Channel(fds[0], fds[1], write_timeout=WRITE_TIMEOUT_S)
                        try:
                            config, _ = chan.recv(30.0)
                        except (ChannelClosed, ChannelTimeout, ValueError, OSError):
                            chan.close()
                            continue
                        channels[chan.read_fd] = (chan, str(config.get("nonce")))
                        self.chan, self.nonce = channels[chan.read_fd]
                        try:
                            self.send("ready", compiled=0, **ready)
                        except (OSError, ChannelTimeout):
                            drop(chan.read_fd)
                        continue
                    self.chan, self.nonce = channels[r]
                    try:
                        req, _ = self.chan.recv(30.0)
                    except (ChannelClosed, ChannelTimeout, ValueError, OSError):
                        drop(r)
                        continue
                    if req.get("type") != "ref":
                        drop(r)
                        continue
                    try:
                        self.serve(req)
                    except (OSError, ChannelTimeout):
                        drop(r)  # that judge is gone, or stopped reading
                    except Exception as e:
                        try:
                            self.send("spec_error", message=self.failure(req, e))
                        except (OSError, ChannelTimeout):
                            pass
                        drop(r)
                if channels:
                    last_used = time.monotonic()
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def rehome(self, home: str) -> Dict[str, Any]:
        """Its own folder, compiled-kernel cache and log from now on: the first judge's folder goes with that
        judge. Returns what its ready message says to later judges (where its log and cache are)."""
        moved = self.backend.rehome_worker(home)
        sys.stdout.flush()
        sys.stderr.flush()
        log = os.open(os.path.join(home, "reference.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.chdir(home)
        return dict(moved, log=os.path.join(home, "reference.log"))


# --------------------------------------------------------------------------------------------------------
class CandidateWorker(Worker):
    def run(self) -> None:
        stage = "load"
        try:
            self.load_spec()
            kernel = self.cfg["kernel"]
            self.kb = self.backend.load(self.cfg["baseline_artifact"], kernel)
            # Started while the candidate compiles; what the judge learns meanwhile arrives now.
            go = self.recv()
            if go.get("type") != "candidate":
                return
            self.cfg.update(go)
            self.outputs = list(go.get("outputs") or [])
            self.inplace = list(go.get("inplace") or [])
            self.threads0 = self.thread_count()
            try:
                self.kc = self.backend.load(self.cfg["candidate_artifact"], kernel)
            except Exception as e:
                self.send("error", stage="load", message=f"{type(e).__name__}: {e}", trace=traceback.format_exc()[-3000:])
                return
            self.send("loaded")
            stage = "correctness"
            self.baseline_compiled = 0
            self.evidence_plan: List[Tuple[Tuple[int, ...], Any, int]] = []
            self.pinned: Dict[Tuple[Tuple[int, ...], Any], List[Any]] = {}
            self.set_bytes: Dict[int, int] = {}  # each shape's input/output set, measured on its first call
            self.returned_bytes: Dict[int, int] = {}
            self.correctness()
            self.pin_evidence()  # before the judge takes the device lock
            stats = self.backend.runtime_stats(self.kc, kernel)
            if self.backend.jit_compiles:
                stats["baseline_compiled"] = self.baseline_compiled
            self.send("correct_done", compile=stats)
            cmd = self.recv()
            if cmd.get("type") != "time":
                return
            stage = "timing"
            self.rng = random.Random(cmd["secret"])
            self.pool_seeds = cmd["pool_seeds"]
            kept = [self.time_shape(i, cmd) for i in range(len(self.shapes))]
            while True:  # the judge may have shapes timed again (a wide interval, or a disagreement)
                more = self.recv()
                if more.get("type") != "retime":
                    break
                again = dict(cmd, **more)
                self.pool_seeds = more["pool_seeds"]
                for i in more["shapes"]:
                    kept[i].extend(self.time_shape(i, again))
            # KernelBench's eager timing, beside ours (KernelBench problems only; kernelbench_timing.py)
            kernelbench = kernelbench_timing.measure(self, more["kernelbench"]) if more.get("kernelbench") else {}
            M.release(self.backend.gpu, max(self.set_bytes.values(), default=0))  # for the reference's checks
            self.send("final", **kernelbench)
            # The judge has released the device: now the evidence is copied to the host, hashed and sent.
            stage = "verify"
            for i, entries in enumerate(kept):
                self.send_kept(i, entries)
                entries.clear()
        except M.MemoryRefused as e:
            self.send("refused", stage=stage, message=str(e))
        except Exception as e:
            self.send("error", stage=stage, message=f"{type(e).__name__}: {e}", trace=traceback.format_exc()[-3000:])

    # --- dynamic process checks (CPU kernels: no thread or child may outlive a call) ----------------------
    def thread_count(self) -> int:
        try:
            return len(os.listdir("/proc/self/task"))
        except OSError:
            return -1

    def children(self) -> int:
        n = 0
        try:
            for t in os.listdir("/proc/self/task"):
                with open(f"/proc/self/task/{t}/children") as f:
                    n += len(f.read().split())
        except OSError:
            pass
        return n

    def leftovers(self) -> Optional[str]:
        if self.backend.gpu:
            return None
        if self.children():
            return "the candidate left a child process running"
        if self.threads0 >= 0 and not self.cfg.get("threads_allowed") and self.thread_count() > self.threads0:
            return "the candidate left a thread running after it returned"
        return None

    # --- one guarded call ----------------------------------------------------------------------------
    def guarded_args(self, args: List[Any]) -> Tuple[List[Any], List[Tuple[int, A.Guard]]]:
        """A copy of every array (also those inside lists) in guard bands; the guards with their argument's index."""
        out: List[Any] = []
        guards: List[Tuple[int, A.Guard]] = []

        def copy(x: Any) -> Any:
            g, guard = A.guarded_copy(x, self.canary)
            guards.append((len(out), guard))
            return g

        for a in args:
            out.append(A.rebuild(a, copy))
        return out, guards

    def guard_damage(self, guards: List[Tuple[int, A.Guard]]) -> Optional[str]:
        for j, g in guards:
            where = g.damage()
            if where:
                return f"wrote {where} of argument {j}"
        return None

    def poison_outputs(self, gargs: List[Any]) -> None:
        for j in self.outputs:
            for leaf in A.leaves(gargs[j]):
                A.poison(leaf)

    def correctness(self) -> None:
        seeds = self.cfg["seeds"]
        for i in range(len(self.shapes)):
            carried: Optional[Tuple[List[Any], List[Tuple[int, A.Guard]]]] = None  # the last run's buffers
            for n, seed in enumerate(seeds):
                # drawn once per seed: the kernel gets a guarded copy, so these stay pristine for the second run (a
                # draw of a published KernelBench input takes seconds)
                args = self.make_inputs(i, seed, 1.0)
                if carried is not None:  # the previous seed's buffers, with this seed's inputs (rep 2)
                    self.same_buffers_call(i, seed, args, *carried)
                    carried = None
                for rep in (0, 1):  # the second run checks determinism
                    gargs, guards = self.guarded_args(args)
                    self.poison_outputs(gargs)
                    self.send("calling", shape=i, seed=seed, rep=rep)
                    watched = self.backend.watches_operators
                    if watched and rep == 0 and seed == self.cfg["seeds"][0]:
                        result = self.watched_call(i, args, gargs)
                    else:
                        result = self.spec.launch(self.kc, *gargs)
                    self.backend.synchronize()
                    outs = self.result_outputs(result, gargs)
                    if rep == 0 and seed == self.cfg["seeds"][0]:
                        self.note_evidence(i, args, outs)
                        self.returned_bytes[i] = M.new_output_bytes(outs, gargs)
                        self.set_bytes[i] = M.array_bytes(args) + self.returned_bytes[i]
                    blobs, dtypes = self.pack_outputs(outs)
                    self.send("call", blobs, phase="correct", shape=i, seed=seed, factor=1.0, rep=rep,
                              guard=self.guard_damage(guards), leftovers=self.leftovers(),
                              digests=self.arg_digests(gargs), dtypes=dtypes)
                    # this call's arrays go before the next call's are made: one set of each at a time (the second
                    # run's buffers stay for the call on the same buffers)
                    del result, outs, blobs
                    if rep == 0:
                        del gargs, guards
                if n + 1 < len(seeds):
                    carried = (gargs, guards)
                del gargs, guards, args
        if self.cfg.get("inputs", "wide") == "wide":
            for i in range(len(self.shapes)):
                self.wide_call(i, seeds[0])
        M.release(self.backend.gpu, max(self.set_bytes.values(), default=0))

    def wide_call(self, i: int, seed: int) -> None:
        """The robustness pass on shape i, where the problem's draw is narrow (phase "wide")."""
        args, narrow, _ = self.wide_inputs(i, seed)
        if not narrow:
            return
        gargs, guards = self.guarded_args(args)
        self.poison_outputs(gargs)
        self.send("calling", shape=i, seed=seed, rep=0)
        result = self.spec.launch(self.kc, *gargs)
        self.backend.synchronize()
        blobs, dtypes = self.pack_outputs(self.result_outputs(result, gargs))
        self.send("call", blobs, phase="wide", shape=i, seed=seed, factor=1.0, rep=0, guard=self.guard_damage(guards),
                  leftovers=self.leftovers(), digests=self.arg_digests(gargs), dtypes=dtypes)

    def same_buffers_call(self, i: int, seed: int, args: List[Any], gargs: List[Any],
                          guards: List[Tuple[int, A.Guard]]) -> None:
        """The buffers of the last call (same addresses) refilled with the next seed's inputs (args, copied: they
        stay pristine for that seed's own runs), outputs poisoned again, and called once more (rep 2): a result kept
        by buffer address shows here. The timed calls rotate their buffers, so this is where a program that refills
        the same buffers every step is stood in for. Made just before the next seed's runs, so the judge checks it
        against the expected outputs it is about to use for them (computed once)."""
        for j, a in enumerate(args):
            gargs[j] = A.fill(gargs[j], a, (lambda dst, _a: A.poison(dst)) if j in self.outputs else A.copy_into)
        self.send("calling", shape=i, seed=seed, rep=2)
        result = self.spec.launch(self.kc, *gargs)
        self.backend.synchronize()
        blobs, dtypes = self.pack_outputs(self.result_outputs(result, gargs))
        self.send("call", blobs, phase="correct", shape=i, seed=seed, factor=1.0, rep=2,
                  guard=self.guard_damage(guards), leftovers=self.leftovers(), digests=self.arg_digests(gargs),
                  dtypes=dtypes)

    def watched_call(self, i: int, args: List[Any], gargs: List[Any]) -> Any:
        """The candidate's call with its GPU torch operators recorded; those the baseline's launch does not
        also run are a library fallback written with operators."""
        from .op_watch import watch
        library = "torch"
        base_ops: Optional[Set[str]] = None
        host_watch = self.backend.host_op_watch()
        if host_watch is not None:
            # a KernelBench ModelNew: the baseline is the reference's operators, so none is allowed (the problem
            # judged against itself, which the build lets through only as the baseline's own text, is not watched)
            if not hasattr(self.kc, "ModelNew"):
                return self.spec.launch(self.kc, *gargs)
            watch, library = host_watch
            base_ops = set()
        else:
            base_args, _ = self.guarded_args(args)
            before = self.backend.cache_snapshot()
            _, base_ops = watch(lambda: self.spec.launch(self.kb, *base_args))
            self.backend.synchronize()
            # what the baseline compiled here (none when the judge's copy of the reference's cache served it)
            self.baseline_compiled += self.backend.compiled_since(before)
        result, ops = watch(lambda: self.spec.launch(self.kc, *gargs))
        if ops is not None and base_ops is not None and ops - base_ops:
            self.send("fallback", shape=i, ops=sorted(ops - base_ops), library=library)
        return result

    # --- timing ------------------------------------------------------------------------------------
    def time_shape(self, i: int, cmd: Dict[str, Any]) -> List[Tuple[Dict[str, Any], List[Any], List[Any]]]:
        """Times both kernels on shape i and sends the samples; returns the evidence kept for checking (host
        copies of outputs and arguments), which is hashed and sent once timing is over."""
        t_setup = _perf_counter()
        pool_seeds = self.pool_seeds[i]
        M.release(self.backend.gpu, self.set_bytes.get(i, 0))  # the last shape's buffers
        pool = [self.make_inputs(i, pool_seeds[0], 1.0)]
        set_bytes = sum(A.nbytes(leaf) for a in pool[0] for leaf in A.leaves(a))
        cap = batch_cap(set_bytes, cmd.get("max_batch", MAX_BATCH), cmd.get("batch_bytes", BATCH_BYTES))
        mem = self.memory_plan(i, pool[0], cmd, cap)
        cap = min(cap, mem.sets if self.backend.gpu else mem.per_kernel_sets())
        pool += [self.make_inputs(i, s, 1.0) for s in pool_seeds[1:mem.pool]]
        timer = GpuTimer(self) if self.backend.gpu else CpuTimer(self)
        kernels = {"baseline": self.kb, "candidate": self.kc}
        sets: Dict[str, List[Tuple[List[Any], List[Tuple[int, A.Guard]]]]] = {}
        plan: Dict[str, List[Tuple[int, float]]] = {}
        per_call: Dict[str, float] = {}
        # GPU: both kernels run in the same buffers. Where a buffer lies in device memory changes a kernel's
        # time (on an H200, one softmax read 48 us in most pairs of buffers and 60 us in one): in separate buffers
        # a kernel judged against itself read up to 9% faster. Every sample refills the inputs and poisons the
        # outputs first, so neither kernel sees what the other left.
        # CPU: each kernel its own sets, or one set for both where memory holds one (mem.sets)
        shared = [self.guarded_args(pool[0])] if self.backend.gpu or mem.sets == 1 else None
        for name, k in kernels.items():
            sets[name] = shared if shared is not None else [self.guarded_args(pool[0])]
            plan[name] = [(0, 1.0)]
            self.refill(sets[name][0][0], pool, 0, 1.0)
            per_call[name] = timer.single(k, sets[name][0][0])  # warm-up and calibration
            self.refill(sets[name][0][0], pool, 0, 1.0)
            per_call[name] = min(per_call[name], timer.single(k, sets[name][0][0]))
            timer.results = []  # the calibration's outputs are let go
        if self.backend.gpu:  # both kernels timed the same way (graphs or flushed events), so ratios compare
            gpu_ms = min(timer.graph_time(k, sets[name][0][0]) for name, k in kernels.items())
            n = timer.joint_batch(gpu_ms, cap)
            batch = {name: n for name in kernels}
        else:
            batch = {name: timer.batch_size(per_call[name], cap) for name in kernels}
        for name in kernels:
            while len(sets[name]) < batch[name]:
                sets[name].append(self.guarded_args(pool[0]))
            plan[name] = [(0, 1.0)] * batch[name]
        distinct = list({id(s): s for s in sets.values()}.values())
        # GPU, one call per sample: the rounds turn through a few buffer sets (each round's two calls in the same
        # set), so where a set lies in device memory is averaged over, and the interval sees how much it moves the
        # ratio (ratios.py: the spread between clusters). Before, a pass used one set, and a kernel judged
        # against itself read 0.888 on one shape in one run of ten, with an interval of +-0.3%.
        rotation: List[Tuple[List[Any], List[Tuple[int, A.Guard]]]] = []
        if shared is not None and not timer.graphs:
            n_sets = rotation_sets(set_bytes, min(mem.sets, int(cmd.get("buffer_sets") or 1)))
            rotation = shared + [self.guarded_args(pool[0]) for _ in range(n_sets - 1)]
            if len(rotation) > 1:
                distinct = [rotation]
            else:
                rotation = []
        labels: List[int] = []  # the buffer set of each kept round
        host_waits = 0  # rounds set aside: a launch still being queued when its timing began
        everything: Dict[str, List[float]] = {"baseline": [], "candidate": []}  # kept or not
        samples: Dict[str, List[float]] = {"baseline": [], "candidate": []}
        kept: List[Tuple[Dict[str, Any], List[Any], List[Any]]] = []
        rounds = 0
        spot_checks = set(self.rng.sample(range(1, max(3, cmd["min_samples"])), 2))
        last_results: List[Any] = []
        budget = cmd["budget_s"]
        spent = 0.0
        order = ["baseline", "candidate"]
        precision = float(cmd.get("precision") or 0.0)
        # Rounds go on past the budget (to max_samples_wide rounds, 4 x the budget) while the paired ratio's
        # interval is wider than ratio_goal; checked every few rounds (a bootstrap costs milliseconds).
        goal = float(cmd.get("ratio_goal") or 0.0)
        hard_max = max(cmd["max_samples"], int(cmd.get("max_samples_wide") or cmd["max_samples"]))
        next_check = 0
        t_enough = 0.0
        pending: List[Tuple[str, int, Any]] = []
        last_queued = ""
        t_rounds = _perf_counter()
        while True:
            # A round queues one sample of each kernel on the GPU (refill, L2 flush, events, call). Rounds are
            # read in groups, waiting once per group, so the GPU runs them back to back; a group ends early at a
            # spot-checked round, whose outputs are read right after it. Guard bands are checked per group: damage
            # to a band stays there until checked, since refills write only the buffers.
            spot = rounds in spot_checks
            label = rounds % len(rotation) if rotation else 0
            if rotation:
                sets["baseline"] = sets["candidate"] = [rotation[label]]
            # a spot-checked round times the candidate last: its outputs are still in the shared buffers
            for name in (["baseline", "candidate"] if spot else order):
                k = kernels[name]
                # A CUDA graph refills its buffers itself from what they held when it was captured (the
                # first sample), so its plan stays fixed; everything else gets new inputs every sample.
                graphed = timer.graphs and len(sets[name]) > 1
                if not (graphed and rounds > 0):
                    other = "candidate" if name == "baseline" else "baseline"
                    for j, (gargs, _) in enumerate(sets[name]):
                        if graphed and shared is not None and other in timer.captured_names:
                            # the second graph of shared buffers: the same inputs as the first, whose copies
                            # both graphs refill from (where those copies lie changes the refill's time)
                            p, f = plan[other][j]
                        else:
                            p = self.rng.randrange(len(pool))
                            f = self.rng.uniform(0.5, 2.0)
                        plan[name][j] = (p, f)
                        self.refill(gargs, pool, p, f)
                pending.append((name, label, timer.start(k, [s[0] for s in sets[name]], name)))
                last_queued = name
            rounds += 1
            order.reverse()  # ABBA...: each kernel follows the other equally often
            if not (spot or len(pending) >= 2 * mem.group_rounds or rounds == cmd["max_samples"] or rounds >= hard_max
                    or rounds == cmd["min_samples"] or not self.backend.gpu):
                continue
            done = timer.finish([q for _, _, q in pending])
            for a in range(0, len(done) - 1, 2):  # a round: its two samples, kept together or set aside together
                pair = [(pending[a + j][0], done[a + j]) for j in (0, 1)]
                for name, (t, results) in pair:
                    if name == "candidate":
                        last_results = results
                    everything[name].append(abs(t))
                if not all(t >= 0 for _, (t, _) in pair):  # negative: GpuTimer.finish set it aside
                    host_waits += 1
                    continue
                for name, (t, _) in pair:
                    samples[name].append(t)
                    spent += t * len(sets[name]) / 1000.0
                labels.append(pending[a][1])
            # their outputs are let go (memory_plan.py: one round's outputs at a time, and the candidate's last)
            pending, done, pair, results = [], [], [], []
            kept_rounds = len(samples["candidate"])
            for group in distinct:
                for j, (gargs, guards) in enumerate(group):
                    damage = self.guard_damage(guards)
                    if damage:
                        self.send("call", phase="timing", shape=i, guard=damage, leftovers=None, digests=[],
                                  dtypes=[], seed=None, factor=None, rep=0)
                        raise StopTiming()
            left = self.leftovers()
            if left:
                self.send("call", phase="timing", shape=i, guard=None, leftovers=left, digests=[], dtypes=[],
                          seed=None, factor=None, rep=0)
                raise StopTiming()
            # Keep the outputs of two samples picked at random (with the judge's secret) for checking.
            if spot:
                j = self.rng.randrange(len(sets["candidate"]))
                self.keep(kept, i, sets["candidate"][j][0], last_results[j], plan["candidate"][j], "timed")
            # Rounds set aside do not count towards the rounds wanted; the rounds taken are bounded all the same
            # (twice the most rounds, and the time rule below).
            if kept_rounds >= cmd["max_samples"] or rounds >= 2 * hard_max or (kept_rounds >= cmd["min_samples"] and (
                    spent >= budget or (precision > 0 and _precise(samples, precision)))):
                now = _perf_counter()
                t_enough = t_enough or now
                # bounded: at most as long again as the rounds so far took (the refills count, not only the calls)
                if (not goal or kept_rounds >= hard_max or rounds >= 2 * hard_max or spent >= 4 * budget
                        or now - t_rounds > 2 * (t_enough - t_rounds)):
                    break
                if rounds >= next_check:
                    if not self.ratio_wide(samples, labels, goal):
                        break
                    next_check = rounds + max(4, rounds // 4)
        t_evidence = _perf_counter()
        if len(samples["candidate"]) < 2:
            # Every launch was still being queued when its timing began, however long the device waited (a
            # launcher that waits for the device itself): the samples as they are, and the verdict says so.
            samples = everything
            labels = [0] * len(samples["candidate"])
            host_waits = -1
        if last_queued != "candidate":
            # the baseline ran last in the shared buffers: one more sample of the candidate, like any other
            # (untimed), so what is checked below is the candidate's
            k = kernels["candidate"]
            if not (timer.graphs and len(sets["candidate"]) > 1):
                for j, (gargs, _) in enumerate(sets["candidate"]):
                    p = self.rng.randrange(len(pool))
                    f = self.rng.uniform(0.5, 2.0)
                    plan["candidate"][j] = (p, f)
                    self.refill(gargs, pool, p, f)
            last_results = timer.finish([timer.start(k, [s[0] for s in sets["candidate"]], "candidate")])[0][1]
        # The last timed sample of the candidate: every buffer set's output is checked (up to 8).
        last = list(range(len(sets["candidate"])))
        self.rng.shuffle(last)
        for j in last[:8]:
            self.keep(kept, i, sets["candidate"][j][0], last_results[j], plan["candidate"][j], "last timed")
        # Fresh inputs (a seed never seen) in the SAME buffers: caching by pointer or by call count shows here.
        gargs, guards = sets["candidate"][0]
        pool = last_results = []  # copied to the host already: room for the fresh inputs (memory_plan.py)
        fresh = self.make_inputs(i, cmd["fresh_seeds"][i], 1.0)
        self.refill(gargs, [fresh], 0, 1.0)  # its arrays and its own scalars, outputs poisoned
        result = self.spec.launch(self.kc, *gargs)
        self.backend.synchronize()
        guard = self.guard_damage(guards)
        kept.append(({"seed": cmd["fresh_seeds"][i], "factor": 1.0, "what": "fresh"},
                     [self.evidence_copy(o) for o in self.result_outputs(result, gargs)],
                     self.arg_digests(gargs)))
        self.backend.synchronize()  # the copies are made before the device is released
        t_end = _perf_counter()
        # where the timed section's wall time went (diagnostics: KERNELEVOLVE_TRACE and the verdict's stages)
        phases = {"setup": t_rounds - t_setup, "capture": timer.capture_s,
                  "rounds": t_evidence - t_rounds - timer.capture_s, "evidence": t_end - t_evidence}
        extra: Dict[str, Any] = {"memory": dict(mem.to_json(), sets_used=sum(len(g) for g in distinct))}
        if rotation:
            extra["buffer_sets"] = labels
        if self.backend.gpu and not timer.graphs:
            extra["host_waits"] = host_waits
            extra["cover_ms"] = round(timer.cover_ms, 4)
        self.send("timing", shape=i, samples=samples, batch=batch, timer=timer.kind, rounds=rounds, **extra,
                  phases={k: round(v, 4) for k, v in phases.items()},
                  verify=[meta for meta, _, _ in kept[:-1]], fresh=dict(kept[-1][0], guard=guard))
        return kept

    def memory_plan(self, i: int, first: List[Any], cmd: Dict[str, Any], cap: int) -> M.MemoryPlan:
        """Shape i's buffer sets, pool and rounds in flight, from the memory the device has (memory_plan.py)."""
        inputs = M.array_bytes(first)
        returned = self.returned_bytes.get(i, 0)
        gpu = self.backend.gpu
        rotation_wanted = rotation_sets(inputs + returned, int(cmd.get("buffer_sets") or 1))
        wanted = max(rotation_wanted, cap) if gpu else 2 * cap
        return M.plan(inputs, inputs + returned, returned, wanted, len(self.pool_seeds[i]), gpu,
                      wanted_rounds=GROUP_ROUNDS, held=inputs)

    def ratio_wide(self, samples: Dict[str, List[float]], labels: List[int], goal: float) -> bool:
        from .ratios import intervals, lower_quartile, median, shape_estimate, wide
        estimate = median if self.backend.gpu else lower_quartile
        passes = [(samples["baseline"], samples["candidate"], labels)]
        b, c = shape_estimate(passes, estimate)
        (iv,), _ = intervals([passes], estimate, rounds=200)
        return c > 0 and wide(iv, b / c, goal)

    def keep(self, kept: List[Tuple[Dict[str, Any], List[Any], List[Any]]], i: int, gargs: List[Any], result: Any,
             plan: Tuple[int, float], what: str) -> None:
        """A timed call's outputs, copied to host memory, and its arguments' fingerprints, for checking once
        timing is over. Both are taken at once: anything left on the device while the candidate's kernels still
        run (later rounds, the fresh-input call) could be overwritten by a kernel that writes far outside its
        buffers."""
        p, f = plan
        outs = [self.evidence_copy(o) for o in self.result_outputs(result, gargs)]
        kept.append(({"seed": self.pool_seeds[i][p], "factor": f, "what": what}, outs, self.arg_digests(gargs)))
        # the copies are made before the candidate's code runs again, whatever streams its kernels use
        self.backend.synchronize()

    # Evidence in pinned host memory. A copy into pageable memory made the timed section wait for the copy and
    # for the operating system to map fresh pages (0.16 of 0.6 s per softmax candidate on an H200, with the
    # device lock held); a copy into page-locked memory allocated beforehand runs at full speed. Each copy is
    # complete before the candidate's code runs again (a device-wide synchronization after it), as before.
    # Page-locked memory is mapped into the device's address space, but no kernel is ever given its address.
    def note_evidence(self, i: int, args: List[Any], outs: List[Any]) -> None:
        """How many copies of shape i's outputs the timed section keeps: two spot-checked calls, the last timed
        call of every buffer set (the batch, at most 8) and the fresh-input call."""
        if not self.backend.gpu:
            return
        cap = batch_cap(sum(A.nbytes(leaf) for a in args for leaf in A.leaves(a)))  # with the judge's limits
        for o in outs:
            if A.is_torch(o) and o.is_cuda:
                self.evidence_plan.append((tuple(o.shape), o.dtype, 3 + min(cap, 8)))

    def pin_evidence(self) -> None:
        if not self.evidence_plan:
            return
        import torch
        try:
            for shape, dtype, n in self.evidence_plan:
                free = self.pinned.setdefault((shape, dtype), [])
                free.extend(torch.empty(shape, dtype=dtype, pin_memory=True) for _ in range(n))
        except Exception:
            self.pinned.clear()  # no page-locked memory to be had: copies into pageable memory, slower

    def evidence_copy(self, o: Any) -> Any:
        """A host copy of one output, queued on the stream (made by the next synchronization)."""
        if not A.is_array(o):
            return o
        if A.is_torch(o) and o.is_cuda:
            free = self.pinned.get((tuple(o.shape), o.dtype))
            if free:
                buf = free.pop()
                buf.copy_(o, non_blocking=True)
                return buf
        return A.host_copy(o)

    def send_kept(self, i: int, entries: List[Tuple[Dict[str, Any], List[Any], List[Optional[str]]]]) -> None:
        """One message per kept call, each let go once sent: the judge holds one call's outputs at a time."""
        while entries:
            meta, outs, digests = entries.pop(0)
            blobs, dtypes = self.pack_outputs(outs)
            self.send("verify", blobs, shape=i, entries=[dict(meta, dtypes=dtypes, digests=digests, count=len(blobs))],
                      cpu_s=round(time.process_time(), 3))
            del outs, blobs

    def refill(self, gargs: List[Any], pool: List[List[Any]], p: int, factor: float) -> None:
        """Pool entry p into the same buffers, untimed: its arrays copied in (floats scaled by factor, the rule of
        make_inputs), outputs poisoned, and its own values beside the arrays (scalars, None, the numbers inside
        lists) in place of the last entry's, so every call sees one whole set of inputs, as the reference does."""
        src = pool[p]

        def load(dst: Any, a: Any) -> None:
            A.copy_into(dst, a)
            if A.is_float(a) and factor != 1.0:
                A.scale(dst, factor)

        for j, a in enumerate(src):
            gargs[j] = A.fill(gargs[j], a, (lambda dst, _a: A.poison(dst)) if j in self.outputs else load)


class StopTiming(Exception):
    pass


COVER_MARGIN_MS = 0.01  # the device's pickup of a queued launch, with room to spare
MAX_COVER_MS = 4.0
ROTATION_BYTES = 2 << 30  # the most device memory a shape's rotating buffer sets take
_SLEEP: Optional[Tuple[float, float]] = None  # (device sleep cycles per ms, the L2 flush's ms), measured once


def rotation_sets(set_bytes: int, wanted: int) -> int:
    """How many buffer sets a GPU pass turns through: the judge's number, fewer where memory is short, at least
    one."""
    return max(1, min(wanted, int(ROTATION_BYTES // max(1, set_bytes))))


def _calibrate_sleep(torch: Any, flush: Any) -> Tuple[float, float]:
    """torch.cuda._sleep spins for a number of device clock cycles; its rate here, and the flush's length. A
    torch without it covers with the flush alone (the samples are still checked, and set aside as needed)."""
    if not hasattr(torch.cuda, "_sleep"):
        return 0.0, 0.0
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    per_ms = 0.0
    flush_ms = float("inf")
    for _ in range(3):
        ev[0].record()
        flush.zero_()
        ev[1].record()
        torch.cuda._sleep(100_000)
        ev[2].record()
        torch.cuda.synchronize()
        flush_ms = min(flush_ms, ev[0].elapsed_time(ev[1]))
        per_ms = max(per_ms, 100_000 / max(ev[1].elapsed_time(ev[2]), 1e-6))  # the fastest clock: sleeps short
    return per_ms, flush_ms


GROUP_ROUNDS = 8  # GPU rounds queued before the worker waits for them


def batch_cap(set_bytes: int, max_batch: int = MAX_BATCH, batch_bytes: int = BATCH_BYTES) -> int:
    """How many buffer sets of set_bytes one timing sample may use."""
    return max(1, min(max_batch, int(batch_bytes // max(1, set_bytes))))


def _precise(samples: Dict[str, List[float]], target: float) -> bool:
    """Every kernel's median known to within `target` (relative standard error, from the interquartile range:
    robust to the odd slow sample), so more rounds would not change the ratio."""
    for xs in samples.values():
        n = len(xs)
        if n < 4:
            return False
        s = sorted(xs)
        m = s[n // 2]
        iqr = s[(3 * n) // 4] - s[n // 4]
        if m <= 0 or 1.253 * (iqr / 1.349) / math.sqrt(n) / m > target:
            return False
    return True


class CpuTimer:
    kind = "cpu-perf_counter"
    graphs = False
    capture_s = 0.0

    def __init__(self, w: CandidateWorker) -> None:
        self.w = w
        self.results: List[Any] = []

    def single(self, k: Any, args: List[Any]) -> float:
        t0 = _perf_counter()
        self.w.spec.launch(k, *args)
        return (_perf_counter() - t0) * 1000.0

    def batch_size(self, ms: float, cap: int) -> int:
        return max(1, min(cap, int(math.ceil(1.0 / max(ms, 1e-6)))))  # each sample >= ~1 ms

    def start(self, k: Any, sets: List[List[Any]], name: str = "") -> Tuple[float, List[Any]]:
        t = self.sample(k, sets)
        return t, self.results

    def finish(self, queued: List[Tuple[float, List[Any]]]) -> List[Tuple[float, List[Any]]]:
        return queued

    def sample(self, k: Any, sets: List[List[Any]]) -> float:
        launch = self.w.spec.launch
        results = self.results = [None] * len(sets)
        n = len(sets)
        t0 = _perf_counter()
        for j in range(n):
            results[j] = launch(k, *sets[j])
        return (_perf_counter() - t0) * 1000.0 / n


class GpuTimer:
    """CUDA events around each call after an L2 flush (a 256 MiB write); kernels under ~10 us are timed as a
    CUDA graph of n calls, minus a graph of the same refills without the calls."""
    kind = "cuda-events"

    def __init__(self, w: CandidateWorker) -> None:
        import torch
        self.torch = torch
        self.w = w
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
        self.results: List[Any] = []
        self.graphs = False
        self.captured: Dict[int, Any] = {}
        self.capture_s = 0.0  # wall time spent capturing graphs (inside the rounds)
        self.captured_names: set = set()  # the kernels whose graphs are captured
        # graphs of the same buffer sets share the copies their refills read, and the graph of refills alone
        self.refills: Dict[Tuple[int, ...], Tuple[Any, Any]] = {}
        # A ctypes launcher launches on the legacy default stream, which cannot be captured.
        self.can_capture = w.backend.graph_capture
        # How long the device is kept busy between a sample's first event and its timing start (the flush and a
        # device-side sleep), so that the launch is queued before its timing begins; grown when it was not.
        self.cover_ms = 0.0
        self.host_ms: List[float] = []  # each launch's host time, from the first event to the launch's return

    def single(self, k: Any, args: List[Any]) -> float:
        torch = self.torch
        self.flush.zero_()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        result = self.w.spec.launch(k, *args)
        e1.record()
        torch.cuda.synchronize()
        self.results = [result]
        return e0.elapsed_time(e1)

    def graph_time(self, k: Any, args: List[Any]) -> float:
        """The kernel's own GPU time (one call captured in a graph, so no launch overhead); inf if it cannot be
        captured. An eager event-timed call of a microsecond kernel reads ~40 us of Python launch instead."""
        if not self.can_capture:
            return float("inf")
        torch = self.torch
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                self.w.spec.launch(k, *args)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(10):  # ten calls: the graph's own launch (~10 us) is spread over them
                    self.w.spec.launch(k, *args)
            best = float("inf")
            for _ in range(3):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                g.replay()
                e1.record()
                torch.cuda.synchronize()
                best = min(best, e0.elapsed_time(e1) / 10)
            return best
        except Exception:
            torch.cuda.synchronize()
            return float("inf")

    def joint_batch(self, ms: float, cap: int) -> int:
        # Kernels under ~10 us of GPU time: both are timed as CUDA graphs of up to 100 calls.
        if ms >= 0.01 or not self.can_capture:
            return 1
        self.kind = "cuda-graph"
        self.graphs = True
        # ~0.1 ms of kernel time per graph: the graph's own launch cancels out (a graph of the same refills
        # without the calls is subtracted), so more calls only cost time
        return max(2, min(cap, 100, int(math.ceil(0.1 / max(ms, 1e-4)))))

    def sample(self, k: Any, sets: List[List[Any]]) -> float:
        if len(sets) == 1:
            return self.single(k, sets[0])
        return self.graph_sample(k, sets)

    def start(self, k: Any, sets: List[List[Any]], name: str = "") -> Any:
        """Queues one sample without waiting: an L2 flush and a device-side sleep (the cover), then the call
        between two events. A launch through a Python wrapper (torch.autograd.Function, output allocation,
        checks) can take as long on the host as the kernel on the device; had the device run out of queued work
        before the launch was queued, the sample would time the host, and another process taking the core
        would slow one kernel's samples and not the other's. Whether the cover sufficed is known for each
        sample (finish): the device reached the timing start no earlier than the host's clock at the first
        event plus the cover's measured length, so a launch that returned before that was queued in time."""
        if len(sets) > 1:
            t = self.graph_sample(k, sets)
            self.captured_names.add(name)
            return t, self.results
        torch = self.torch
        ec, e0, e1 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        t0 = _perf_counter()
        ec.record()  # reached by the device no earlier than t0
        self.flush.zero_()
        cycles = self.sleep_cycles()
        if cycles:
            torch.cuda._sleep(cycles)
        e0.record()
        result = self.w.spec.launch(k, *sets[0])
        host_ms = (_perf_counter() - t0) * 1000.0
        e1.record()
        return (ec, e0, e1, host_ms), [result]

    def finish(self, queued: List[Any]) -> List[Tuple[float, List[Any]]]:
        """The samples' times; a sample whose launch may not have been queued when its timing began comes back
        negative (its round is set aside and taken again), and the cover grows for the next ones."""
        self.torch.cuda.synchronize()
        out = []
        short = False
        for t, results in queued:
            if isinstance(t, tuple):
                ec, e0, e1, host_ms = t
                t = e0.elapsed_time(e1)
                self.host_ms.append(host_ms)
                if host_ms + COVER_MARGIN_MS >= ec.elapsed_time(e0):
                    t = -t
                    short = True
            out.append((t, results))
        if short:
            # most launches' host time, with room: a launch slowed by another process taking the core is set
            # aside, not chased with a cover as long as that one
            usual = sorted(self.host_ms)[(9 * len(self.host_ms)) // 10]
            self.cover_ms = min(MAX_COVER_MS, max(1.25 * self.cover_ms, 1.5 * usual + COVER_MARGIN_MS))
        return out

    def sleep_cycles(self) -> int:
        """Device clock cycles of sleep for the cover beyond the flush (0: the flush alone, or no sleep here)."""
        global _SLEEP
        if self.cover_ms <= 0:
            return 0
        if _SLEEP is None:
            _SLEEP = _calibrate_sleep(self.torch, self.flush)
        per_ms, flush_ms = _SLEEP
        return int(max(0.0, self.cover_ms - flush_ms) * per_ms)

    def graph_sample(self, k: Any, sets: List[List[Any]]) -> float:
        torch = self.torch
        if id(k) not in self.captured:
            t = _perf_counter()
            self.captured[id(k)] = self.capture(k, sets)
            self.capture_s += _perf_counter() - t
        entry = self.captured[id(k)]
        if entry is None:
            # Could not capture: time eagerly, one call at a time, each after an L2 flush.
            times_eager, eager_results = [], []
            for a in sets:
                times_eager.append(self.single(k, a))
                eager_results.extend(self.results)
            self.results = eager_results
            return sorted(times_eager)[len(sets) // 2]
        g1, g0, results, _snapshots = entry
        times = []
        for g in (g0, g1, g0, g1):  # g1 last, so the outputs left in the buffers are from real calls
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            g.replay()
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1))
        self.results = results
        without = min(times[0], times[2])
        with_ms = min(times[1], times[3])
        return max(with_ms - without, 1e-6) / len(sets)

    def capture(self, k: Any, sets: List[List[Any]]) -> Any:
        torch = self.torch
        launch = self.w.spec.launch
        # The refills happen inside the graphs too, so each call sees fresh inputs and poisoned outputs.
        key = tuple(id(args) for args in sets)
        shared = self.refills.get(key)
        snapshots = shared[1] if shared else [[A.rebuild(a, A.clone) for a in args] for args in sets]

        def refill_one(args: List[Any], snap: List[Any]) -> None:
            for j, a in enumerate(args):
                for leaf, kept in zip(A.leaves(a), A.leaves(snap[j])):
                    if j in self.w.outputs:
                        A.poison(leaf)
                    else:
                        leaf.copy_(kept)

        def refill_all() -> None:
            for args, snap in zip(sets, snapshots):
                refill_one(args, snap)

        results: List[Any] = [None] * len(sets)

        def with_calls() -> None:
            for n, (args, snap) in enumerate(zip(sets, snapshots)):
                refill_one(args, snap)
                results[n] = launch(k, *args)

        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                with_calls()
            torch.cuda.current_stream().wait_stream(s)
            g1 = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g1):
                with_calls()
            if shared:
                g0 = shared[0]
            else:
                g0 = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g0):
                    refill_all()
                self.refills[key] = (g0, snapshots)
            torch.cuda.synchronize()
        except Exception:
            torch.cuda.synchronize()
            self.kind = "cuda-events"
            return None
        # The graphs read the snapshots' memory on every replay but do not own it: keep them alive with the
        # graphs, or the allocator hands that memory to the next tensor and the calls see someone else's inputs.
        return g1, g0, results, snapshots


def main(argv: List[str]) -> int:
    chan = Channel(int(argv[1]), int(argv[2]))
    header, _ = chan.recv(None)
    if header["mode"] != "reference":
        worker: Worker = CandidateWorker(chan, header)
    elif os.environ.get("KERNELEVOLVE_REFERENCE_CTL"):
        worker = SharedReference(chan, header)
    else:
        worker = ReferenceWorker(chan, header)
    worker.run()
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
