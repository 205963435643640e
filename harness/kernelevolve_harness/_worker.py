"""The worker: the only process that runs kernel code. Started by the judge as
`python3 -m kernelevolve_harness._worker READ_FD WRITE_FD` in its own process group, with stdout and stderr
going to a log file. Every message it sends carries the run's nonce, which arrives over the private channel.

Two modes: `reference` (a clean process that never sees the candidate: it validates the spec and serves
expected outputs for (shape, seed, scale) on request) and `candidate` (runs the candidate's correctness calls
and the interleaved timing against the baseline, sending the raw evidence; the judge decides).
"""
from __future__ import annotations

import os
import random
import sys
import time
import traceback
from typing import Any, Dict, List, Optional, Set, Tuple

import numpy as np

from . import arrays as A
from . import clean_baseline
from . import device_outputs as D
from . import kernelbench_timing
from . import memory_plan as M
from . import perturb, tamper
from .backends import get_backend
from .device_lock import device_lock
from .protocol import Channel
from .shape_timing import Kept, ShapeTiming
from .spec import SpecError, import_spec, validate
from .timing_settings import TimingSettings


# What a spec's fork point imported before forking this worker (warm.Zygote): the spec's module by its path, the
# baseline's by its module name (the baseline's text is in the name) and kernel.
PRELOADED: Dict[Tuple[str, ...], Any] = {}


def preload(backend: str, spec_path: str, artifact: str, kernel: str) -> None:
    """In a fork point: what every worker of this spec does first (load_spec, the baseline's load)."""
    PRELOADED[("spec", spec_path)] = import_spec(spec_path)
    PRELOADED[("baseline", os.path.basename(artifact), kernel)] = get_backend(backend).load(artifact, kernel)


def one_device_queue(gpu: bool) -> None:
    """A GPU worker's context with one hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, unless the environment says
    otherwise): the driver then makes it two to three times faster, and many at once faster still (on the H200, 8
    at once in 0.38 s against 1.03 s with the default 8 queues: scripts/gpu/context_rate.py), and every candidate's
    worker makes one. A worker runs its kernels on one stream (candidates may not make streams), so no work that
    could overlap is serialized; the timed rounds' graphs are captured on a side stream that waits for the first."""
    if gpu and not os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS"):
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"


class Worker:
    def __init__(self, chan: Channel, config: Dict[str, Any]) -> None:
        self.chan = chan
        self.cfg = config
        self.nonce = config["nonce"]
        self.backend = get_backend(config["backend"])
        one_device_queue(self.backend.gpu)  # before the device is first touched
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
        self.spec = PRELOADED.get(("spec", self.cfg["spec"])) or import_spec(self.cfg["spec"])
        self.shapes = list(self.spec.SHAPES)

    def load_baseline(self, kernel: str) -> Any:
        artifact = self.cfg["baseline_artifact"]
        kb = PRELOADED.get(("baseline", os.path.basename(artifact), kernel))
        return kb if kb is not None else self.backend.load(artifact, kernel)

    def make_inputs(self, shape_index: int, seed: int, factor: float) -> List[Any]:
        args = self.spec.inputs(dict(self.shapes[shape_index]), seed)
        args = list(args) if isinstance(args, (tuple, list)) else [args]
        if factor != 1.0:
            # The scaling rule: float arrays (also inside lists, 0-dim ones included) that are not pure outputs
            # are multiplied by the factor; every other value, float scalars included, is passed as inputs()
            # drew it, then times the rolled mask of perturb.py. The reference and the candidate's buffers (refill)
            # apply the same rule to the same draw.
            for j, a in enumerate(args):
                if j not in self.outputs:
                    for leaf in A.leaves(a):
                        if A.is_float(leaf):
                            A.scale(leaf, factor)
                            perturb.apply(leaf, seed, factor)
        return args

    def wide_inputs(self, shape_index: int, seed: int, kind: Any = "wide") -> Tuple[List[Any], str, str]:
        """The robustness pass's inputs for (shape, seed) of one kind (wide_inputs.PROBES; True is "wide"), what
        was changed (for wide: what was narrow) and what replaced it; "" when the kind does not apply."""
        from .wide_inputs import probe
        return probe(self.make_inputs(shape_index, seed, 1.0), self.outputs, seed, kind if isinstance(kind, str) else "wide")

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

    def send_outputs(self, kind: str, outs: List[Any], **fields: Any) -> None:
        """A message carrying one call's outputs (fields: what the call was): as .npy blobs, or where they are
        (device_outputs.py): shared with the reference process, which compares them on their device for the
        judge; this waits until the judge says they were compared, then lets go of them."""
        threshold = self.cfg.get("share_bytes")
        shared = D.try_share(outs) if D.shareable(outs, threshold if isinstance(threshold, int) else None) else None
        if shared is not None:
            described, keep = shared
            self.send(kind, [], shared=described, dtypes=[d["dtype_name"] for d in described], **fields)
            self.wait_compared()  # what was shared stays alive (keep) until then
            del keep
            return
        blobs, dtypes = self.pack_outputs(outs)
        self.send(kind, blobs, dtypes=dtypes, **fields)

    def wait_compared(self) -> None:
        """Until the judge says the outputs this worker shared were compared (device_outputs.py)."""
        reply = self.recv()
        if reply.get("type") != "compared":
            raise RuntimeError(f"the judge sent {reply.get('type')!r} where 'compared' was expected")

    def alias(self, outs: List[Any], args: List[Any]) -> Optional[str]:
        """An output that is not a plain array (a lazy subclass), or what an output shares memory with that it may
        not: an input argument (one neither in OUTPUTS nor in
        INPLACE, which the baseline's own outputs show: probe), or an output of an earlier call that the candidate
        still holds (remember). None when every output is memory of its own. A result that is its input (ReLU on
        non-negative inputs) does no work; one written into the buffer it returned last time changes what the
        caller holds from that call."""
        written = set(self.outputs) | set(self.inplace)
        own = [leaf for j in written if j < len(args) for leaf in A.leaves(args[j]) if A.is_array(leaf)]
        for k, o in enumerate(outs):
            if A.is_torch(o):
                torch = sys.modules["torch"]
                plain = type(o) in (torch.Tensor, torch.nn.Parameter)
            else:
                plain = type(o) is np.ndarray
            if A.is_array(o) and not plain:
                # a subclass can defer its work to whenever it is read (__torch_function__, __array__): the timed
                # calls' results are never read while the clock runs
                return (f"returned output {k} as a {type(o).__name__}, a subclass of "
                        f"{'torch.Tensor' if A.is_torch(o) else 'numpy.ndarray'} (outputs must be plain arrays, "
                        f"computed when the call returns)")
            if not A.is_array(o) or any(A.same_storage(o, leaf) for leaf in own):
                continue
            for j, a in enumerate(args):
                if j not in written and any(A.is_array(leaf) and A.same_storage(o, leaf) for leaf in A.leaves(a)):
                    return f"returned output {k} in the memory of input argument {j}"
            for ref in getattr(self, "earlier", []):
                held = ref()
                if held is not None and A.same_storage(o, held):
                    return f"returned output {k} in the memory of an output it returned from an earlier call"
        return None

    def remember(self, outs: List[Any]) -> None:
        """Weak references to the memory this call's outputs own: once the worker lets go of them, one still alive
        at the next call is held by the candidate (alias). Memory let go and allocated again is not an alias, and
        a weak reference does not keep it."""
        import weakref
        refs = []
        for o in outs:
            if A.is_array(o):
                root = o
                while getattr(root, "base" if isinstance(root, np.ndarray) else "_base", None) is not None:
                    root = getattr(root, "base" if isinstance(root, np.ndarray) else "_base")
                try:
                    refs.append(weakref.ref(root))
                except TypeError:
                    pass
        self.earlier = refs

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
        # Where the start's seconds go (the judge that waited for it reports them: reference_start_*_s).
        phases: Dict[str, float] = {}
        t = time.monotonic()
        try:
            self.load_spec()
            info = validate(self.spec, self.cfg["spec"])
        except SpecError as e:
            self.send("spec_error", message=str(e))
            return None
        t = _lap(phases, "spec", t)
        self.outputs = list(info.outputs or [])
        self.inplace = list(info.inplace)
        self.tolerance = dict(info.tolerance or {})
        self.expected: Optional[Tuple[Any, ...]] = None  # the last expected outputs kept on the device (serve_on_device)
        try:
            kb = self.load_baseline(info.kernel)
        except Exception as e:
            self.send("spec_error", message=f"The baseline cannot be loaded: {type(e).__name__}: {e}.")
            return None
        self.kb = kb
        cached = self.backend.cache_snapshot()
        t = _lap(phases, "baseline_load", t)
        try:
            self.backend.synchronize()  # the device's context (a GPU's first call), apart from the probe's work
            t = _lap(phases, "device", t)
            self.probe(info)
            t = _lap(phases, "probe", t)
            if self.backend.jit_compiles:
                self.compile_every_shape()
                t = _lap(phases, "compile_shapes", t)
        except SpecError as e:
            self.send("spec_error", message=str(e))
            return None
        M.release(self.backend.gpu, getattr(self, "set_bytes", 0))
        ready = {"info": info.to_json(), "outputs": self.outputs, "inplace": self.inplace,
                 "output_bytes": getattr(self, "output_bytes", 0), "shareable": getattr(self, "shareable", False)}
        self.send("ready", compiled=self.backend.compiled_since(cached), start_s=phases, **ready)
        return ready

    def failure(self, req: Dict[str, Any], e: Exception) -> str:
        return (f"The reference failed on shape {self.shapes[req['shape']]} (seed {req['seed']}): "
                f"{type(e).__name__}: {e}. Fix the spec or the baseline.")

    def probe(self, info: Any) -> None:
        """Runs the baseline once: infers OUTPUTS when the spec does not give them, and checks that the baseline
        leaves every other argument unchanged (else the spec must declare it in INPLACE)."""
        where = os.path.basename(self.cfg["spec"])
        other = self.layout_of_another_draw(where)  # drawn and let go first: one set in memory at a time
        try:
            args = self.make_inputs(0, 12345, 1.0)
        except Exception as e:
            raise SpecError(f"{where}: inputs({self.shapes[0]}, seed) failed: {type(e).__name__}: {e}.")
        if not any(A.leaves(a) for a in args):
            raise SpecError(f"{where}: inputs() returned no arrays; it must return the kernel's arguments as a tuple.")
        self.check_layout(where, args, other)
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
        returned = self.result_outputs(result, args)
        self.output_bytes = M.array_bytes(returned)  # the judge asks ahead by this
        self.shareable = D.shareable(returned, 0)  # torch tensors: they can be compared where they are

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

    def layout_of_another_draw(self, where: str) -> List[Any]:
        try:
            other = self.make_inputs(0, 12346, 1.0)
        except Exception as e:
            raise SpecError(f"{where}: inputs({self.shapes[0]}, seed) failed: {type(e).__name__}: {e}.")
        return [A.layout(a) for a in other]

    def check_layout(self, where: str, args: List[Any], other: List[Any]) -> None:
        """Every set of inputs of a shape must fit the same buffers: the timed calls move each one into buffers
        made for the first (the values beside the arrays travel with their set). `other`: the layout of another
        seed's draw."""
        if len(other) != len(args) or [A.layout(a) for a in args] != other:
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
        if req.get("clock"):  # the baseline's time in this clean process (clean_baseline.py)
            held: List[List[float]] = []  # the device lock taken here, not by the judge: a shared reference may
            # be answering other judges first, and no judge holds the lock while it waits for that
            try:
                with device_lock(req.get("lock"), held, float(req.get("background") or 0.0)):
                    times, error = clean_baseline.clock(self, req["shape"], req["seed"], int(req["clock"]),
                                                        float(req.get("longer") or 1.0)), ""
            except Exception as e:  # not the candidate's doing: the verdict says the clock was not had
                times, error = [], f"{type(e).__name__}: {e}"
            M.release(self.backend.gpu, M.LARGE_SET)
            self.send("ref", [], key=req["key"], times=times, error=error, held=held)
            return
        if req.get("compare") is not None or req.get("headers_only"):
            self.serve_on_device(req)
            return
        i, seed, factor = req["shape"], req["seed"], req["factor"]
        narrow = wide = ""
        if req.get("wide"):  # the robustness pass: none when no input of this draw is narrow
            args, narrow, wide = self.wide_inputs(i, seed, req["wide"])
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

    def expected_outputs(self, args: List[Any]) -> List[Any]:
        """The expected outputs for these (pristine) inputs: the spec's reference, else the baseline's launch."""
        if self.spec_has_reference():
            return A.as_output_list(self.spec.reference(*args))
        for j in self.outputs:
            for leaf in A.leaves(args[j]):
                A.poison(leaf)
        result = self.spec.launch(self.kb, *args)
        self.backend.synchronize()
        return self.result_outputs(result, args)

    def serve_on_device(self, req: Dict[str, Any]) -> None:
        """device_outputs.py: the candidate's outputs of one call, shared by its worker, compared here with the
        expected ones on their device ("compared": None per output that matches, else what is wrong); or
        (headers_only) what the judge needs to know of an input draw without outputs (its fingerprints, and for the
        robustness pass whether it is narrow). The last expected outputs stay on the device: the calls of one seed
        come one after another."""
        i, seed, factor, is_wide = req["shape"], req["seed"], req["factor"], req.get("wide") or False
        which = (i, seed, factor, is_wide)
        kept = self.expected if self.expected is not None and self.expected[0] == which else None
        if kept is None:
            self.expected = None  # the last expected outputs go before the next are made
            narrow = wide = ""
            if is_wide:
                args, narrow, wide = self.wide_inputs(i, seed, is_wide)
            else:
                args = self.make_inputs(i, seed, factor)
            digests = self.arg_digests(args)
            if req.get("headers_only") or (is_wide and not narrow):
                self.send("ref", [], key=req["key"], digests=digests, dtypes=[], narrow=narrow, wide=wide)
                return
            outs = self.expected_outputs(args)
            del args
            kept = self.expected = (which, outs, digests, narrow, wide)
        _, outs, digests, narrow, wide = kept
        if req.get("headers_only"):
            self.send("ref", [], key=req["key"], digests=digests, dtypes=[A.dtype_name(o) for o in outs],
                      narrow=narrow, wide=wide)
            return
        shared = req["compare"].get("outputs") or []
        dtypes = req["compare"].get("dtypes") or []
        compared: List[Optional[str]] = []
        if len(shared) == len(outs) and len(dtypes) == len(outs):
            for k, (d, ref) in enumerate(zip(shared, outs)):
                try:
                    cand = D.open_shared(d)
                except Exception as e:  # the judge says so (not the candidate's doing, nor the spec's)
                    self.send("ref", [], key=req["key"], digests=digests, dtypes=[], narrow=narrow, wide=wide,
                              count=len(outs), compared=[], unopened=f"{type(e).__name__}: {e}"[:300])
                    return
                try:
                    compared.append(D.compare(k, cand, str(dtypes[k]), ref, self.tolerance, is_wide))
                finally:
                    del cand
                if compared[-1]:
                    break
        self.send("ref", [], key=req["key"], digests=digests, dtypes=[A.dtype_name(o) for o in outs],
                  narrow=narrow, wide=wide, count=len(outs), compared=compared, cpu_s=round(time.process_time(), 3))

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
            held = True

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
                    held = True
                elif held:
                    # no judge left: what it kept for them goes back to the device while it waits for the next
                    # (a suite moves on to another problem, whose evaluations need that memory)
                    held = False
                    self.expected = None
                    M.release(self.backend.gpu, M.LARGE_SET)
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
        use_temporary_folder(home)
        return dict(moved, log=os.path.join(home, "reference.log"))


def _lap(phases: Dict[str, float], name: str, since: float) -> float:
    now = time.monotonic()
    phases[name] = round(now - since, 3)
    return now


# --------------------------------------------------------------------------------------------------------
class CandidateWorker(Worker):
    def run(self) -> None:
        stage = "load"
        try:
            self.load_spec()
            kernel = self.cfg["kernel"]
            self.kb = self.load_baseline(kernel)
            self.threads0 = self.thread_count()
            # before any of the candidate's code is loaded: what it may not change (tamper.py)
            self.untouched = tamper.Snapshot(["kernelevolve_harness", getattr(self.spec, "__name__", ""),
                                              getattr(self.kb, "__name__", ""),
                                              getattr(getattr(getattr(self.spec, "_problem", None), "module", None),
                                                      "__name__", "")])
            # Started while the candidate compiles; what the judge learns meanwhile arrives now.
            go = self.recv()
            if go.get("type") == "precompile":
                self.precompile(go["candidate_artifact"], kernel)
                go = self.recv()
            if go.get("type") != "candidate":
                return
            self.cfg.update(go)
            self.outputs = list(go.get("outputs") or [])
            self.inplace = list(go.get("inplace") or [])
            try:
                if getattr(self, "kc", None) is None or self.precompiled != self.cfg["candidate_artifact"]:
                    self.kc = self.backend.load(self.cfg["candidate_artifact"], kernel)
            except Exception as e:
                self.send("error", stage="load", message=f"{type(e).__name__}: {e}", trace=traceback.format_exc()[-3000:])
                return
            if self.tampered("import"):
                return
            self.send("loaded")
            stage = "correctness"
            self.baseline_compiled = 0
            self.set_bytes: Dict[int, int] = {}  # each shape's input/output set, measured on its first call
            self.correctness()
            try:  # what the compiler made of the kernel is read for the profile; a failed read fails no candidate
                stats = self.backend.runtime_stats(self.kc, kernel)
            except Exception as e:
                stats = {"stats_error": f"{type(e).__name__}: {e}"}
            if self.backend.jit_compiles:
                stats["baseline_compiled"] = self.baseline_compiled
            self.send("correct_done", compile=stats)
            cmd = self.recv()
            if cmd.get("type") != "time":
                return
            stage = "timing"
            settings = TimingSettings.from_message(cmd["settings"])
            self.rng = random.Random(cmd["secret"])
            kept: List[List[Kept]] = [[] for _ in self.shapes]
            shapes, pass_cmd = list(range(len(self.shapes))), cmd
            while True:  # the judge may have shapes timed again (a wide interval, or a disagreement)
                for i in shapes:
                    if not self.time_shape(i, pass_cmd, settings, kept[i]):
                        return
                pass_cmd = self.recv()
                if pass_cmd.get("type") == "snapshot":  # before the clean process's clock (clean_baseline.py)
                    if self.tampered("timing"):  # what the snapshot can name is said as such (tamper.py)
                        return
                    self.send("untouched")
                    pass_cmd = self.recv()
                while pass_cmd.get("type") == "clock":  # the baseline clocked here, in turn with the clean process
                    self.send("clock", times=clean_baseline.clock(self, pass_cmd["shape"], pass_cmd["seed"],
                                                                  int(pass_cmd["batch"]),
                                                                  float(pass_cmd.get("longer") or 1.0)))
                    M.release(self.backend.gpu, M.LARGE_SET)
                    pass_cmd = self.recv()
                if pass_cmd.get("type") != "retime":
                    break
                shapes = pass_cmd["shapes"]
            # KernelBench's eager timing, beside ours (KernelBench problems only; kernelbench_timing.py); the judge
            # holds the timing lock around it
            kernelbench = (kernelbench_timing.measure(self, pass_cmd["kernelbench"]) if pass_cmd.get("kernelbench")
                           else {})
            M.release(self.backend.gpu, max(self.set_bytes.values(), default=0))  # for the reference's checks
            if self.tampered("timing"):
                return
            self.send("final", **kernelbench)
            # Every pass is over: now the evidence is hashed and sent.
            stage = "verify"
            for i, entries in enumerate(kept):
                self.send_kept(i, entries)
                entries.clear()
        except M.MemoryRefused as e:
            self.send("refused", stage=stage, message=str(e))
        except Exception as e:
            self.send("error", stage=stage, message=f"{type(e).__name__}: {e}", trace=traceback.format_exc()[-3000:])

    def tampered(self, after: str) -> bool:
        """Tells the judge, and says True, when the candidate changed what the baseline runs with (tamper.py)."""
        change = self.untouched.changed()
        if change is None:
            return False
        self.send("tampered", after=after, change=change)
        return True

    def precompile(self, artifact: str, kernel: str) -> None:
        """While the judge waits for the reference's start (a new spec's first evaluations on a host: 6-14 s on the
        H200), the candidate is loaded and called once on every shape, on inputs of a seed of its own that no check
        uses, and the outputs dropped: Triton compiles a kernel at its first call per shape, so the checks then
        find it compiled (the candidate's compiles and the reference's start overlap). Nothing is checked here and
        nothing kept but the compiled kernels; whatever goes wrong (an exception) is left for the checks, which
        load and call it again. Its arrays are in guard bands, as in the checks: a write out of bounds lands in a
        band (the checks find it) instead of in memory the worker needs. Says "precompile_loaded" once the
        candidate is loaded (a hang before is the load stage's), then "precompiled" with the seconds it took, the
        shapes it called and the compiles that ran side by side (the backend's compile_ahead)."""
        t, called = time.monotonic(), 0
        self.kc, self.precompiled = None, artifact
        try:
            self.kc = self.backend.load(artifact, kernel)
        except Exception:
            pass  # loaded again, and its error reported, with the candidate message
        self.send("precompile_loaded")
        seed = random.SystemRandom().randrange(1, 2**31)

        def first_calls() -> None:
            nonlocal called
            called = 0
            for i in range(len(self.shapes) if self.kc is not None else 0):
                gargs, _ = self.guarded_args(self.make_inputs(i, seed, 1.0))
                self.spec.launch(self.kc, *gargs)
                self.backend.synchronize()
                del gargs
                called += 1

        ahead = 0
        try:
            ahead = self.backend.compile_ahead(first_calls, self.kc)  # Triton: the compiles side by side
        except Exception:
            pass
        self.send("precompiled", seconds=round(time.monotonic() - t, 3), shapes=called, ahead=ahead)

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
        """Each shape's calls: per seed, the call on the last seed's buffers (rep 2, from the second seed on) and
        two runs (reps 0 and 1); the wide-input call (robustness pass) comes in among them where the judge drew it
        (wide_at: after that many of the shape's calls)."""
        seeds = self.cfg["seeds"]
        wide = self.cfg.get("inputs", "wide") == "wide"
        wide_at = list(self.cfg.get("wide_at") or [0] * len(self.shapes))
        # which of a shape's runs (reps 0 and 1 of each seed, in order) has its operators watched (watched_call),
        # drawn by the judge
        watch_at = list(self.cfg.get("watch_at") or [0] * len(self.shapes))
        # a ModelNew's host code may run no library operator at all: every run is watched (no baseline runs beside)
        every_run = self.backend.host_op_watch() is not None
        for i in range(len(self.shapes)):
            carried: Optional[Tuple[List[Any], List[Tuple[int, A.Guard]]]] = None  # the last run's buffers
            made = 0  # the shape's calls so far

            def wide_now() -> None:
                nonlocal made
                if wide and made == wide_at[i]:
                    self.wide_call(i, seeds[0])
                made += 1

            wide_now()  # wide_at 0: before the shape's first call
            for n, seed in enumerate(seeds):
                # drawn once per seed: the kernel gets a guarded copy, so these stay pristine for the second run (a
                # draw of a published KernelBench input takes seconds)
                args = self.make_inputs(i, seed, 1.0)
                if carried is not None:  # the previous seed's buffers, with this seed's inputs (rep 2)
                    self.same_buffers_call(i, seed, args, *carried)
                    carried = None
                    wide_now()
                for rep in (0, 1):  # the second run checks determinism
                    gargs, guards = self.guarded_args(args)
                    self.poison_outputs(gargs)
                    self.send("calling", shape=i, seed=seed, rep=rep)
                    if self.backend.watches_operators and (every_run or 2 * n + rep == watch_at[i]):
                        result = self.watched_call(i, args, gargs)
                    else:
                        result = self.spec.launch(self.kc, *gargs)
                    self.backend.synchronize()
                    outs = self.result_outputs(result, gargs)
                    if rep == 0 and seed == self.cfg["seeds"][0]:
                        self.set_bytes[i] = M.array_bytes(args) + M.new_output_bytes(outs, gargs)
                    alias = self.alias(outs, gargs)
                    self.send_outputs("call", outs, phase="correct", shape=i, seed=seed, factor=1.0, rep=rep,
                                      guard=self.guard_damage(guards), leftovers=self.leftovers(),
                                      digests=self.arg_digests(gargs), alias=alias)
                    self.remember(outs)
                    # this call's arrays go before the next call's are made: one set of each at a time (the second
                    # run's buffers stay for the call on the same buffers)
                    del result, outs
                    if rep == 0:
                        del gargs, guards
                    if rep == 0 or n + 1 == len(seeds):  # not between these buffers and their call again (rep 2)
                        wide_now()
                if n + 1 < len(seeds):
                    carried = (gargs, guards)
                del gargs, guards, args
            if wide and made <= wide_at[i]:  # drawn past the shape's calls: it comes last
                self.wide_call(i, seeds[0])
        M.release(self.backend.gpu, max(self.set_bytes.values(), default=0))

    def wide_call(self, i: int, seed: int) -> None:
        """The robustness pass on shape i: a call on each kind of its inputs (wide_inputs.PROBES, the phase) that
        applies to the problem's draw (wide: where it is narrow)."""
        from .wide_inputs import PROBES
        for kind in PROBES:
            args, changed, _ = self.wide_inputs(i, seed, kind)
            if not changed:
                continue
            gargs, guards = self.guarded_args(args)
            del args
            self.poison_outputs(gargs)
            self.send("calling", shape=i, seed=seed, rep=0)
            result = self.spec.launch(self.kc, *gargs)
            self.backend.synchronize()
            outs = self.result_outputs(result, gargs)
            self.send_outputs("call", outs, phase=kind, shape=i, seed=seed, factor=1.0, rep=0,
                              guard=self.guard_damage(guards), leftovers=self.leftovers(),
                              digests=self.arg_digests(gargs), alias=self.alias(outs, gargs))
            self.remember(outs)
            del gargs, guards, result, outs

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
        outs = self.result_outputs(result, gargs)
        self.send_outputs("call", outs, phase="correct", shape=i, seed=seed, factor=1.0, rep=2,
                          guard=self.guard_damage(guards), leftovers=self.leftovers(), digests=self.arg_digests(gargs),
                          alias=self.alias(outs, gargs))
        self.remember(outs)

    def watched_call(self, i: int, args: List[Any], gargs: List[Any], after_timing: bool = False) -> Any:
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
            self.send("fallback", shape=i, ops=sorted(ops - base_ops), library=library, after_timing=after_timing)
        return result

    # --- timing ------------------------------------------------------------------------------------
    def time_shape(self, i: int, pass_cmd: Dict[str, Any], settings: TimingSettings, kept: List[Kept]) -> bool:
        """One timed pass of shape i, the judge holding the timing lock around its rounds alone: the setup before
        ("prepared"; the judge takes the lock and says "go"), the evidence after ("released"). False when the
        judge said something else (it is ending the evaluation)."""
        timing = ShapeTiming(self, i, pass_cmd["pool_seeds"][i], pass_cmd["fresh_seeds"][i], settings, self.rng)
        timing.setup()
        self.send("prepared", shape=i)
        if self.recv().get("type") != "go":
            return False
        self.send("timing", shape=i, **timing.rounds())
        if self.recv().get("type") != "released":
            return False
        self.send("checked", shape=i, **timing.evidence())
        kept.extend(timing.kept)
        return True

    def send_kept(self, i: int, entries: List[Kept]) -> None:
        """One message per kept call, each let go once sent: the judge holds one call's outputs at a time."""
        threshold = self.cfg.get("share_bytes")
        while entries:
            e = entries.pop(0)
            for o, seal in zip(e.outputs, e.sealed or []):
                if seal is not None and A.device_digest(o) != seal:
                    raise RuntimeError(f"the output of a {e.meta.get('what')} call, kept on the device, changed after "
                                       f"the call: a later kernel wrote outside its buffers")
            there = D.on_device(e.outputs, threshold if isinstance(threshold, int) else None, self.backend.gpu)
            shared = D.try_share(there) if there is not None else None
            if shared is not None:
                described, keep = shared
                entry = dict(e.meta, dtypes=[d["dtype_name"] for d in described], digests=e.digests, count=0,
                             shared=described)
                self.send("verify", [], shape=i, entries=[entry], cpu_s=round(time.process_time(), 3))
                self.wait_compared()  # compared on the device: kept until then
                del e, keep, there
                continue
            blobs, dtypes = self.pack_outputs(e.outputs)
            entry = dict(e.meta, dtypes=dtypes, digests=e.digests, count=len(blobs))
            self.send("verify", blobs, shape=i, entries=[entry], cpu_s=round(time.process_time(), 3))
            del e, blobs

    def refill(self, gargs: List[Any], pool: List[List[Any]], p: int, factor: float, seed: int) -> None:
        """Pool entry p (drawn with `seed`) into the same buffers, untimed: its arrays copied in (floats scaled by
        factor and the mask of perturb.py, the rule of make_inputs), outputs poisoned, and its own values beside the
        arrays (scalars, None, the numbers inside lists) in place of the last entry's, so every call sees one whole
        set of inputs, as the reference does."""
        src = pool[p]

        def load(dst: Any, a: Any) -> None:
            A.copy_into(dst, a)
            if A.is_float(a) and factor != 1.0:
                A.scale(dst, factor)
                perturb.apply(dst, seed, factor)  # seed: the pool entry's draw

        for j, a in enumerate(src):
            gargs[j] = A.fill(gargs[j], a, (lambda dst, _a: A.poison(dst)) if j in self.outputs else load)


def use_temporary_folder(folder: str) -> None:
    """Temporary files of the code this process runs (Triton's .ptx, .cubin and ptxas logs, a spec's own) go to
    `folder`, which goes away with the job (or, for a shared reference, with it): a worker killed while compiling,
    as every candidate cancelled as moot is, left them in /tmp."""
    import tempfile
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = None  # read again from TMPDIR (a forked worker inherits the server's cached value)


def main(argv: List[str]) -> int:
    use_temporary_folder(os.getcwd())  # the judge's working folder (warm.py and judge.py start workers there)
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
