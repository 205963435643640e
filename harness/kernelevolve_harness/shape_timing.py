"""One timed pass of one shape: the baseline and the candidate in interleaved rounds, in three phases that the
judge brackets with the timing lock, so that nothing but the timed rounds runs while it is held:

    setup()      before the lock: the inputs, the buffers (as many as the memory plan allows: memory_plan.py),
                 the calibration (which timer, how many calls per sample), CUDA graphs captured, page-locked
                 memory for the copies taken during the rounds
    rounds()     under the lock: rounds until the stopping rule says enough; returns the samples
    evidence()   after the lock: the last timed calls' outputs kept, the guard bands checked, the fresh-input call

A round is one sample of each kernel, in either order (round_order: each kernel runs first in half the rounds of
every buffer set), each sample on freshly refilled inputs (a pool entry scaled by a random factor) and poisoned
outputs. The kernel that runs second in a round could take longer (17-23% on one softmax shape on an H200, its
code cold in the instruction caches, which every event-timed sample now starts with emptied: code_flush.py); the
estimate balances the orders and the interval reaches both orders' readings where they differ (ratios.py). On a
GPU both kernels run in the same buffers (where a buffer lies in device memory changes a kernel's time: a kernel
judged against itself in buffers of its own read up to 9% faster on an H200), and the rounds turn through a few
buffer sets, so that placement is averaged over and the interval sees it (ratios.py: the spread between clusters).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from . import arrays as A
from . import memory_plan as M
from .protocol import BATCH_BYTES, MAX_BATCH
from .ratios import BASELINE_FIRST, CANDIDATE_FIRST
from .stopping_rule import StoppingRule, describe
from .timers import (GRAPH_BELOW_MS, CacheFlush, CpuTimer, EventTimer, GraphTimer, calibrate_sleep, gpu_call_ms,
                     graph_call_ms, graph_calls)
from .timing_settings import TimingSettings

_perf_counter = time.perf_counter

ROTATION_BYTES = 2 << 30  # the most device memory a shape's rotating buffer sets take
SPOT_CHECKS = 2  # timed samples, picked with the judge's secret, whose outputs are copied at once and checked
LAST_CHECKED = 8  # buffer sets of the last timed sample whose outputs are checked

Buffers = Tuple[List[Any], List[Tuple[int, A.Guard]]]  # one set of guarded arguments, and its guards
Plan = Tuple[int, float]  # (pool entry, input scale) a buffer set was last refilled with


class StopTiming(Exception):
    """A guard tripped during timing; the worker has told the judge which."""


@dataclass
class Kept:
    """A timed call's evidence: what it was given (seed, scale), host copies of its outputs, its arguments'
    fingerprints. Hashed and sent to the judge once every pass is over."""
    meta: Dict[str, Any]
    outputs: List[Any]
    digests: List[Optional[str]]
    # fingerprints of the outputs kept as copies on the device (None: a host copy), taken with the copy: checked
    # again before they are compared, since a later kernel of the candidate could reach them
    sealed: Optional[List[Optional[str]]] = None


def rotation_sets(set_bytes: int, wanted: int) -> int:
    """How many buffer sets a GPU pass turns through: the judge's number, fewer where memory is short, at least
    one."""
    return max(1, min(wanted, int(ROTATION_BYTES // max(1, set_bytes))))


def batch_cap(set_bytes: int, max_batch: int = MAX_BATCH, batch_bytes: int = BATCH_BYTES) -> int:
    """How many buffer sets of set_bytes one timing sample may use."""
    return max(1, min(max_batch, int(batch_bytes // max(1, set_bytes))))


def round_order(taken: int, sets: int) -> int:
    """Which kernel runs first in round `taken` (ratios.BASELINE_FIRST or CANDIDATE_FIRST) of a pass that turns
    through `sets` buffer sets, one a round: alternating, and with an even number of sets the alternation shifts by
    one each time the sets come round again, so that each set sees both orders (with one order a set, the sets'
    spread would be the order's)."""
    shift = taken // sets if sets % 2 == 0 else 0
    return (taken + shift) % 2


def spot_rounds(rng: Any, floor_rounds: int) -> List[int]:
    """The rounds whose candidate outputs are kept: two among the first floor_rounds (never the first)."""
    return sorted(rng.sample(range(1, max(3, floor_rounds)), SPOT_CHECKS))


class ShapeTiming:
    """One pass of shape i for worker w (a CandidateWorker: the spec, both kernels, the guarded buffers)."""

    def __init__(self, w: Any, i: int, pool_seeds: List[int], fresh_seed: int, settings: TimingSettings,
                 rng: Any) -> None:
        self.w, self.i, self.s, self.rng = w, i, settings, rng
        self.pool_seeds, self.fresh_seed = pool_seeds, fresh_seed
        self.gpu = bool(w.backend.gpu)
        self.kernels = {"baseline": w.kb, "candidate": w.kc}
        self.kept: List[Kept] = []
        self.phases: Dict[str, float] = {"setup": 0.0, "capture": 0.0, "rounds": 0.0, "evidence": 0.0}
        self.spans: Dict[str, List[float]] = {}  # each phase's wall-clock [start, end] (the judge's trace)
        self.sets: Dict[str, List[Buffers]] = {}
        self.plan: Dict[str, List[Plan]] = {}
        self.rotation: List[Buffers] = []  # GPU, one call per sample: the buffer sets the rounds turn through
        self.batch: Dict[str, int] = {}
        self.timer: Any = None
        self.pinned: Dict[Tuple[Any, ...], List[Any]] = {}  # page-locked buffers for the copies in the rounds
        self.last_results: List[Any] = []  # what the candidate's last sample returned, per buffer set
        self.last_queued = ""
        self.probed = False  # the wide-input probe made (_wide_probe)

    # --- before the lock ------------------------------------------------------------------------------
    def setup(self) -> None:
        t0, wall = _perf_counter(), time.time()
        w = self.w
        M.release(self.gpu, getattr(w, "set_bytes", {}).get(self.i, 0))  # the last shape's buffers
        self.pool = [w.make_inputs(self.i, self.pool_seeds[0], 1.0)]
        set_bytes = sum(A.nbytes(leaf) for a in self.pool[0] for leaf in A.leaves(a))
        cap = batch_cap(set_bytes, self.s.max_batch, self.s.batch_bytes)
        self.mem = self._memory_plan(self.pool[0], cap)
        cap = min(cap, self.mem.sets)
        self.pool += [w.make_inputs(self.i, s, 1.0) for s in self.pool_seeds[1:self.mem.pool]]
        if self.gpu:
            self._setup_gpu(set_bytes, cap)
        else:
            self._setup_cpu(cap)
        groups = [self.rotation] if self.rotation else list({id(s): s for s in self.sets.values()}.values())
        self.distinct: List[List[Buffers]] = groups
        self.phases["setup"] = _perf_counter() - t0 - self.phases["capture"]
        self.spans["setup"] = [wall, time.time()]

    def _baseline_returns(self, first: List[Any]) -> int:
        """Bytes of the outputs the baseline returns in memory of its own on this shape, from one call of the
        baseline (once per shape): the plan is sized from what the baseline returns, never from what the candidate
        does (a candidate whose first output was small, or in its input's memory, would have sized it wrong)."""
        known: Dict[int, int] = self.w.__dict__.setdefault("baseline_returned", {})
        if self.i not in known:
            w = self.w
            args, _ = w.guarded_args(first)
            result = w.spec.launch(w.kb, *args)
            w.backend.synchronize()
            known[self.i] = M.new_output_bytes(w.result_outputs(result, args), args)
            del args, result
        return known[self.i]

    def _memory_plan(self, first: List[Any], cap: int) -> M.MemoryPlan:
        """This shape's buffer sets, pool and rounds in flight, from the memory the device has (memory_plan.py)."""
        inputs = M.array_bytes(first)
        returned = self._baseline_returns(first)
        wanted = max(rotation_sets(inputs + returned, self.s.buffer_sets), cap) if self.gpu else cap
        return M.plan(inputs, inputs + returned, returned, wanted, len(self.pool_seeds), self.gpu,
                      wanted_rounds=M.GROUP_ROUNDS, held=inputs)

    def _setup_cpu(self, cap: int) -> None:
        """Both kernels in the same buffer sets, as on a GPU: a sample calls its kernel once on each of n sets, n
        such that a sample of the faster kernel takes about a millisecond. In sets of their own, where the pages
        lay (huge pages or not, cache sets) made a row sum read 1.13x against itself in one evaluation of two,
        its interval excluding 1.00; the rounds' spread cannot see a difference that lasts the whole pass."""
        w = self.w
        self.timer = CpuTimer(w.spec.launch)
        first = w.guarded_args(self.pool[0])
        n = 1
        for k in self.kernels.values():
            ms = float("inf")
            for _ in range(2):  # a warm-up call, and the calibration
                w.refill(first[0], self.pool, 0, 1.0, self.pool_seeds[0])
                ms = min(ms, self.timer.single(k, first[0]))
            n = max(n, CpuTimer.batch_size(ms, cap))
        sets = [first] + [w.guarded_args(self.pool[0]) for _ in range(n - 1)]
        for name in self.kernels:
            self.sets[name] = sets
            self.plan[name] = [(0, 1.0)] * n
            self.batch[name] = n
        for _ in range(2):  # a whole sample of each, untimed: the memory their outputs take is had before the rounds
            for name, k in self.kernels.items():
                self._refill(name)
                self.timer.start(name, k, [s[0] for s in sets])

    def _setup_gpu(self, set_bytes: int, cap: int) -> None:
        """Both kernels in the same buffers, timed the same way (so ratios compare): as CUDA graphs when either
        takes under ~10 us of GPU time, else with events, turning through a few buffer sets."""
        import torch
        w = self.w
        launch = w.spec.launch
        flush = getattr(w, "flush_buffer", None)
        if flush is None:
            flush = w.flush_buffer = CacheFlush(torch)
        shared = [w.guarded_args(self.pool[0])]
        outs: List[Any] = []
        for k in self.kernels.values():
            for _ in range(2):  # a warm-up call, and another
                w.refill(shared[0][0], self.pool, 0, 1.0, self.pool_seeds[0])
                _, result = gpu_call_ms(torch, flush, launch, k, shared[0][0])
            outs = w.result_outputs(result, shared[0][0])
        self._pin(outs, SPOT_CHECKS)
        del result, outs  # the calibration's outputs are let go (memory_plan.py)
        gpu_ms = float("inf")
        if w.backend.graph_capture:  # a ctypes launcher launches on the legacy default stream: not capturable
            gpu_ms = min(graph_call_ms(torch, launch, k, shared[0][0]) for k in self.kernels.values())
        if gpu_ms < GRAPH_BELOW_MS and self._capture_graphs(torch, shared, graph_calls(gpu_ms, cap)):
            return
        self.timer = EventTimer(torch, launch, flush)
        calibrate_sleep(torch, flush)
        n_sets = rotation_sets(set_bytes, min(self.mem.sets, self.s.buffer_sets))
        self.rotation = shared + [w.guarded_args(self.pool[0]) for _ in range(n_sets - 1)]
        self.sets = {name: [self.rotation[0]] for name in self.kernels}
        self.plan = {name: [(0, 1.0)] for name in self.kernels}
        self.batch = {name: 1 for name in self.kernels}

    def _capture_graphs(self, torch: Any, shared: List[Buffers], n: int) -> bool:
        """Both kernels' graphs on the same n buffer sets, with the same inputs, read from the same copies.
        False (and nothing kept) when either cannot be captured: both are then timed with events."""
        t0 = _perf_counter()
        w = self.w
        sets = shared + [w.guarded_args(self.pool[0]) for _ in range(n - 1)]
        timer = GraphTimer(torch, w.spec.launch, w.outputs, w.flush_buffer)
        plan = [(self.rng.randrange(len(self.pool)), self.rng.uniform(0.5, 2.0)) for _ in sets]
        ok = True
        for name, k in self.kernels.items():
            for (gargs, _), (p, f) in zip(sets, plan):
                w.refill(gargs, self.pool, p, f, self.pool_seeds[p])
            ok = ok and timer.capture(name, k, [s[0] for s in sets])
        self.phases["capture"] = _perf_counter() - t0
        if not ok:
            return False
        self.timer = timer
        self.sets = {name: sets for name in self.kernels}
        self.plan = {name: list(plan) for name in self.kernels}
        self.batch = {name: n for name in self.kernels}
        return True

    def _compared_on_device(self, o: Any) -> bool:
        """An output large enough to be compared where it is (device_outputs.py): kept as a copy on the device
        (where there is room) rather than a host copy (seconds for a 6.4 GB output, and as much page-locked memory
        per spot check)."""
        threshold = self.w.cfg.get("share_bytes")
        return isinstance(threshold, int) and A.is_torch(o) and o.is_cuda and A.nbytes(o) >= threshold

    def _pin(self, outs: List[Any], n: int) -> None:
        """Page-locked host buffers for n copies of each output. A copy into pageable memory made the timed
        section wait for the copy and for the system to map fresh pages (0.16 of 0.6 s per softmax candidate on
        an H200, under the lock); into page-locked memory allocated beforehand it runs at full speed. It is mapped
        into the device's address space, but no kernel is ever given its address."""
        try:
            import torch
            for o in outs:
                if A.is_torch(o) and o.is_cuda and not self._compared_on_device(o):
                    key = (tuple(o.shape), o.dtype)
                    self.pinned.setdefault(key, []).extend(
                        torch.empty(key[0], dtype=o.dtype, pin_memory=True) for _ in range(n))
        except Exception:
            self.pinned.clear()  # no page-locked memory to be had: copies into pageable memory, slower

    # --- under the lock -------------------------------------------------------------------------------
    def rounds(self) -> Dict[str, Any]:
        """Rounds until the stopping rule is met; the timing message's fields. A GPU round's samples are queued,
        and the worker waits once per group of rounds, so the GPU runs them back to back; a group ends early at
        a spot-checked round, whose outputs are copied right after it."""
        t0, wall = _perf_counter(), time.time()
        # kernels under ~10 us (graphs) need their ratio to +-5%, the others to +-2% (the fidelity goal)
        goal = self.s.round_goal_short if isinstance(self.timer, GraphTimer) else self.s.round_goal
        rule = StoppingRule(self.s, "median" if self.gpu else "lower quartile", goal)
        spots = set(spot_rounds(self.rng, self.s.floor_rounds))
        everything: Dict[str, List[float]] = {"baseline": [], "candidate": []}  # kept or set aside
        pending: List[Tuple[str, int, Any]] = []
        taken = 0
        n_sets = max(1, len(self.rotation))
        while True:
            spot = taken in spots
            label = taken % n_sets
            if not self.gpu:
                self.last_results = []  # let go before this round's samples (_drop)
            if self.rotation:
                self.sets["baseline"] = self.sets["candidate"] = [self.rotation[label]]
            # a spot-checked round times the candidate last: its outputs are still in the shared buffers
            first = BASELINE_FIRST if spot else round_order(taken, n_sets)
            for name in (["baseline", "candidate"] if first == BASELINE_FIRST else ["candidate", "baseline"]):
                if not isinstance(self.timer, GraphTimer):  # a graph refills its buffers itself
                    self._refill(name)
                sets = [s[0] for s in self.sets[name]]
                sample = self.timer.start(name, self.kernels[name], sets)
                if not self.gpu and not (spot and name == "candidate"):
                    sample.results = []  # _drop
                pending.append((name, label, sample))
                self.last_queued = name
            taken += 1
            if not (spot or len(pending) >= 2 * self.mem.group_rounds or not self.gpu
                    or taken in (self.s.far_floor_rounds, self.s.floor_rounds)):
                continue
            done = self.timer.finish([q for _, _, q in pending])
            for a in range(0, len(done) - 1, 2):  # a round: its two samples, kept or set aside together
                pair = {pending[a + j][0]: done[a + j] for j in (0, 1)}
                self.last_results = pair["candidate"].results
                for name, sample in pair.items():
                    everything[name].append(sample.ms)
                if pair["baseline"].set_aside or pair["candidate"].set_aside:
                    rule.add_set_aside()
                    continue
                b, c = pair["baseline"].ms, pair["candidate"].ms
                rule.add_measurement(b, c, pending[a][1], timed_s=(b * self.batch["baseline"]
                                                                   + c * self.batch["candidate"]) / 1000.0,
                                     order=BASELINE_FIRST if pending[a][0] == "baseline" else CANDIDATE_FIRST)
            # their outputs are let go (memory_plan.py: one round's outputs at a time, and the candidate's last)
            pending, done, pair = [], [], {}
            if spot:
                j = self.rng.randrange(len(self.sets["candidate"]))
                self._keep(self.sets["candidate"][j][0], self.last_results[j], self.plan["candidate"][j], "timed",
                           pinned=True)
                if not self.probed and (self.mem.pool > 1 or not self.gpu):  # room for one more input set
                    self._wide_probe(j)
            if rule.is_finished():
                # a pass that stops before its floor (far below) takes the spot checks it has not reached in the
                # rounds right after (the rule is asked again after each); the candidate cannot tell them apart
                late = sorted(r for r in spots if r >= taken)
                if not late:
                    break
                spots = (spots - set(late)) | set(range(taken, taken + len(late)))
        stats = rule.stats()
        samples = {"baseline": rule.baseline, "candidate": rule.candidate}
        labels, orders, host_waits = rule.labels, rule.orders, stats.set_aside
        if stats.rounds < 2:
            # Every launch was still being queued when its timing began, however long the device waited (a
            # launcher that waits for the device itself): the samples as they are, and the verdict says so.
            samples, labels, orders, host_waits = everything, [0] * len(everything["candidate"]), [], -1
        report: Dict[str, Any] = {"samples": samples, "batch": self.batch, "timer": self.timer.kind,
                                  "rounds": taken, "rule": describe(stats), "orders": orders,
                                  "memory": dict(self.mem.to_json(), sets_used=sum(len(g) for g in self.distinct))}
        if self.rotation:
            report["buffer_sets"] = labels
        if isinstance(self.timer, EventTimer):
            report["host_waits"] = host_waits
            report["cover_ms"] = round(self.timer.cover_ms, 4)
            report["code_flush_bytes"] = self.w.flush_buffer.code_bytes
        self.phases["rounds"] = _perf_counter() - t0
        self.spans["rounds"] = [wall, time.time()]
        return report

    def _wide_probe(self, j: int) -> None:
        """An untimed call of the candidate on wide inputs (wide_inputs.py) in buffer set j, in the first spot-checked
        round (a round drawn with the judge's secret), its outputs kept: the robustness pass is not a call the
        candidate can count on being the only one on such inputs. Nothing where the problem's draw is not narrow
        or the evaluation judges on the problem's inputs alone."""
        self.probed = True
        w = self.w
        if w.cfg.get("inputs", "wide") != "wide":
            return
        args, narrow, _ = w.wide_inputs(self.i, self.fresh_seed)
        if not narrow:
            return
        gargs = self.sets["candidate"][j][0]
        w.refill(gargs, [args], 0, 1.0, self.fresh_seed)  # its arrays and its own scalars, outputs poisoned
        del args
        result = w.spec.launch(w.kc, *gargs)
        w.backend.synchronize()
        returned = w.result_outputs(result, gargs)
        alias = w.alias(returned, gargs)
        outs = [self._host_copy(o, False) for o in returned]
        self.kept.append(Kept({"seed": self.fresh_seed, "factor": 1.0, "what": "wide probe", "wide": True,
                               "alias": alias}, outs, w.arg_digests(gargs), _seals(outs)))
        w.backend.synchronize()

    def _refill(self, name: str) -> None:
        """New inputs for kernel name's next sample: a pool entry, scaled, into each of its buffer sets."""
        for j, (gargs, _) in enumerate(self.sets[name]):
            p, f = self.rng.randrange(len(self.pool)), self.rng.uniform(0.5, 2.0)
            self.plan[name][j] = (p, f)
            self.w.refill(gargs, self.pool, p, f, self.pool_seeds[p])

    # --- after the lock -------------------------------------------------------------------------------
    def evidence(self) -> Dict[str, Any]:
        """The checks that need no quiet device, once the lock is released: the candidate's last timed outputs
        kept (nothing of the candidate has run since), the guard bands of every buffer set (damage stays in a
        band until checked: refills write only the buffers), no thread or child left (CPU), and one call on
        fresh inputs in the same buffers (caching by pointer or by call count shows here). Raises StopTiming
        after telling the judge when a guard tripped. Returns the 'checked' message's fields."""
        t0, wall = _perf_counter(), time.time()
        w = self.w
        if self.last_queued != "candidate" or len(self.last_results) != len(self.sets["candidate"]):
            # the baseline ran last in the shared buffers, or the last sample's results were let go (_drop): one
            # more call of the candidate, untimed, so what is checked below is the candidate's
            self._candidate_call()
        last = list(range(len(self.sets["candidate"])))
        self.rng.shuffle(last)
        for j in last[:LAST_CHECKED]:
            self._keep(self.sets["candidate"][j][0], self.last_results[j], self.plan["candidate"][j], "last timed")
        for group in self.distinct:
            for gargs, guards in group:
                damage = w.guard_damage(guards)
                if damage:
                    self._tripped(guard=damage)
        left = w.leftovers()
        if left:
            self._tripped(leftovers=left)
        gargs, guards = self.sets["candidate"][0]
        self.pool, self.last_results = [], []  # copied to the host already: room for the fresh inputs (memory_plan.py)
        # a seed never seen, in the same buffers; on wide inputs in half the evaluations (drawn with the judge's
        # secret) where the problem's draw is narrow
        wide = w.cfg.get("inputs", "wide") == "wide" and self.rng.random() < 0.5
        narrow = ""
        if wide:
            fresh_inputs, narrow, _ = w.wide_inputs(self.i, self.fresh_seed)
        if not narrow:
            wide, fresh_inputs = False, w.make_inputs(self.i, self.fresh_seed, 1.0)
        w.refill(gargs, [fresh_inputs], 0, 1.0, self.fresh_seed)  # its arrays and its own scalars, outputs poisoned
        if w.backend.watches_operators and w.backend.host_op_watch() is not None:
            # a ModelNew's host code watched here too: one that turns to a library after its checked calls
            result = w.watched_call(self.i, fresh_inputs, gargs, after_timing=True)
        else:
            result = w.spec.launch(w.kc, *gargs)
        w.backend.synchronize()
        guard = w.guard_damage(guards)
        returned = w.result_outputs(result, gargs)
        alias = w.alias(returned, gargs)
        fresh_outs = [self._host_copy(o, False) for o in returned]
        fresh = Kept({"seed": self.fresh_seed, "factor": 1.0, "what": "fresh", "wide": wide, "alias": alias},
                     fresh_outs, w.arg_digests(gargs), _seals(fresh_outs))
        verify = [k.meta for k in self.kept]
        self.kept.append(fresh)
        self.phases["evidence"] = _perf_counter() - t0
        self.spans["evidence"] = [wall, time.time()]
        return {"verify": verify, "fresh": dict(fresh.meta, guard=guard), "spans": self.spans,
                "phases": {k: round(v, 4) for k, v in self.phases.items()}}

    def _candidate_call(self) -> None:
        if isinstance(self.timer, GraphTimer):
            queued = self.timer.start("candidate", self.kernels["candidate"], [s[0] for s in self.sets["candidate"]])
            self.last_results = self.timer.finish([queued])[0].results
            return
        self._refill("candidate")
        self.last_results = [self.w.spec.launch(self.w.kc, *gargs) for gargs, _ in self.sets["candidate"]]
        self.w.backend.synchronize()

    def _tripped(self, guard: Optional[str] = None, leftovers: Optional[str] = None) -> None:
        self.w.send("call", phase="timing", shape=self.i, guard=guard, leftovers=leftovers, digests=[], dtypes=[],
                    seed=None, factor=None, rep=0)
        raise StopTiming()

    def _keep(self, gargs: List[Any], result: Any, plan: Plan, what: str, pinned: bool = False) -> None:
        """A timed call's outputs, copied to host memory, and its arguments' fingerprints. Both are taken at
        once, before the candidate's code runs again: anything left on the device while its kernels still run
        could be overwritten by a kernel that writes far outside its buffers."""
        p, f = plan
        returned = self.w.result_outputs(result, gargs)
        alias = self.w.alias(returned, gargs)
        outs = [self._host_copy(o, pinned) for o in returned]
        self.kept.append(Kept({"seed": self.pool_seeds[p], "factor": f, "what": what, "alias": alias}, outs,
                              self.w.arg_digests(gargs), _seals(outs)))
        self.w.backend.synchronize()  # the copies are made whatever streams the candidate's kernels use

    def _host_copy(self, o: Any, pinned: bool) -> Any:
        if not A.is_array(o):
            return o
        if self._compared_on_device(o) and _device_room(o):
            return o.clone()  # a copy on the device, for the reference process to compare there
        if pinned and A.is_torch(o) and o.is_cuda:
            free = self.pinned.get((tuple(o.shape), o.dtype))
            if free:
                buf = free.pop()
                buf.copy_(o, non_blocking=True)  # made by the synchronization that follows
                return buf
        return A.host_copy(o)


# Left free on the device after a kept copy of an output: the reference's work, and the workspaces of the
# libraries the kernels call (cuDNN picks another algorithm, with other rounding, when its workspace does not fit)
DEVICE_COPY_HEADROOM = 4 << 30
DEVICE_COPY_HEADROOM_SHARE = 0.15  # of the device's memory, when that is more


def _device_room(o: Any) -> bool:
    """Room on the device for a copy of o: in what is free, and within this evaluation's stated share
    (memory_plan.MEMORY_ENV) where one is stated."""
    import torch
    room, total = M.gpu_free_bytes(o.device)
    stated = M.stated_bytes()
    if stated is not None:
        room = min(room, stated - torch.cuda.memory_allocated(o.device))
        total = min(total, stated)
    return room >= A.nbytes(o) + max(DEVICE_COPY_HEADROOM, int(DEVICE_COPY_HEADROOM_SHARE * total))


def _seals(outs: List[Any]) -> Optional[List[Optional[str]]]:
    """Fingerprints of the outputs kept on the device (Kept.sealed); None when every one is a host copy."""
    on_device = [A.is_torch(o) and o.is_cuda for o in outs]
    if not any(on_device):
        return None
    return [A.device_digest(o) if there else None for o, there in zip(outs, on_device)]
