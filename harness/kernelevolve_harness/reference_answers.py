"""The judge's side of its reference process (the clean one that never sees a candidate): when to ask it, and what
to keep of its answers. The judge decides what to check; this keeps the conversation.

- Expected outputs of a draw (shape, seed, input scale; the robustness pass's wide draws) are asked ahead of need
  and held until checked, no more at a time than PREFETCH_BYTES of outputs hold (memory_plan.py), and let go once
  checked (asked again, they are computed again).
- Questions whose answers carry no outputs (device_outputs.py): a call's outputs compared where they are, or a
  draw's fingerprints alone.
- The reference answers in the order asked; the seconds the judge waits for it go into the verdict's stages
  (`reference_wait_correctness_s`, `reference_wait_timing_s`, `reference_wait_verify_s`): a shared reference serves
  other judges too.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .spec import SpecError

# expected outputs asked of the reference ahead of need, at most (memory_plan.py)
PREFETCH_BYTES = int(float(os.environ.get("KERNELEVOLVE_PREFETCH_BYTES", 2 << 30)))

Answer = Tuple[Dict[str, Any], List[Any]]  # the reference's header, and the expected outputs (compare.Expected)


class ReferenceAnswers:
    def __init__(self, send: Callable[[Dict[str, Any]], None], recv: Callable[[], Tuple[Dict[str, Any], List[bytes]]],
                 stages: Dict[str, float], tolerance: Callable[[], Dict[str, Any]]) -> None:
        self.send = send
        self.recv = recv
        self.stages = stages
        self.tolerance = tolerance
        self.cache: Dict[str, Answer] = {}
        self.pending: List[str] = []  # keys asked, in the order the reference answers
        self.queue: List[Tuple[str, int, int, float, bool]] = []  # keys wanted, not asked yet (no room)
        self.answers: Dict[str, Dict[str, Any]] = {}  # answers without outputs, by key (ask)
        self.headers: Dict[str, Dict[str, Any]] = {}  # header()'s, by draw
        self.asked = 0
        self.output_bytes = 0  # one answer's outputs, in bytes (0: not known, every key is asked at once)
        self.share_bytes: Optional[int] = None  # a worker's outputs from this size on are compared where they are
        self.on_device = False  # the first shape's outputs are: expected outputs are not asked ahead as bytes

    def ready(self, header: Dict[str, Any]) -> None:
        """What the reference's ready message says of the outputs: their size on the first shape, and whether they
        can be compared where they are (device_outputs.py)."""
        from . import device_outputs
        self.output_bytes = int(header.get("output_bytes") or 0)
        self.share_bytes = device_outputs.share_bytes() if header.get("shareable") else None
        self.on_device = self.share_bytes is not None and self.output_bytes >= self.share_bytes

    @staticmethod
    def key(shape: int, seed: int, factor: float, wide: Any = False) -> str:
        """wide: a robustness-pass kind (wide_inputs.PROBES; True is "wide"), or False for the problem's inputs."""
        return f"{shape}:{seed}:{factor!r}" + (f":{wide if isinstance(wide, str) else 'wide'}" if wide else "")

    def prefetch(self, wanted: List[Tuple[int, int, float]], wide: bool = False, now: bool = False) -> None:
        """Asks for expected outputs ahead of need; the reference answers in order, computing the next while the
        judge compares the last. wide: on the robustness pass's inputs (wide_inputs.py)."""
        if self.on_device and not now:
            # compared on the device: an expected output asked ahead would cross to this process for nothing (`now`:
            # one the judge needs, for outputs a worker sent as bytes after all)
            return
        for shape, seed, factor in wanted:
            key = self.key(shape, seed, factor, wide)
            if key not in self.cache and key not in self.pending and all(q[0] != key for q in self.queue):
                self.queue.append((key, shape, seed, factor, wide))
        self._ask()

    def _ask(self, first: str = "") -> None:
        """Sends queued requests while the answers outstanding and those received but not yet used fit
        PREFETCH_BYTES; `first` (the key the judge waits for) goes first, and is sent even past that room when
        nothing else is outstanding."""
        self.queue.sort(key=lambda q: q[0] != first)  # stable: the rest keep their order
        room = max(1, PREFETCH_BYTES // self.output_bytes) if self.output_bytes else len(self.queue) + len(self.cache)
        while self.queue and (len(self.pending) + len(self.cache) < room
                              or (first and self.queue[0][0] == first and not self.pending)):
            key, shape, seed, factor, wide = self.queue.pop(0)
            self.send({"type": "ref", "shape": shape, "seed": seed, "factor": factor, "key": key, "wide": wide})
            self.pending.append(key)

    def _take(self, wait: str) -> None:
        """Receives the next answer (for the oldest key asked); the seconds waited for it are added to `wait`."""
        from .arrays import from_npy
        from .compare import Expected
        t = time.monotonic()
        header, blobs = self.recv()
        self.stages[wait] = self.stages.get(wait, 0.0) + time.monotonic() - t
        if header["type"] == "spec_error":
            raise SpecError(header["message"])
        got = self.pending.pop(0)
        if header.get("key") != got:
            raise SpecError(f"The reference process answered {header.get('key')!r} for {got!r}.")
        if "#" in got:  # a question of its own (ask): no outputs
            self.answers[got] = header
            return
        self.output_bytes = max(self.output_bytes, sum(len(b) for b in blobs))
        tol = self.tolerance()
        from .wide_inputs import PROBES as probes  # the robustness pass's kinds: compared as wide (compare.py)
        self.cache[got] = (header, [Expected(from_npy(b), header["dtypes"][k], tol, got.rsplit(":", 1)[-1] in probes)
                                    for k, b in enumerate(blobs)])

    def _wait_stage(self) -> str:
        """Where a wait counts: before the timing or after it."""
        return "reference_wait_verify_s" if "timing_s" in self.stages else "reference_wait_correctness_s"

    def settle(self) -> None:
        """Takes every answer asked so far, and asks what else the room allows, until nothing is outstanding:
        called before a timed pass takes the lock, so the reference's work for this evaluation (on the same
        device) never runs beside its timed rounds."""
        while self.pending:
            self._take("reference_wait_timing_s")
            self._ask()

    def expected(self, shape: int, seed: int, factor: float, wide: bool = False) -> Answer:
        """The expected outputs for (shape, seed, input scale); kept until forget()."""
        key = self.key(shape, seed, factor, wide)
        if key not in self.cache:
            self.prefetch([(shape, seed, factor)], wide, now=True)
            if key not in self.pending:
                self._ask(first=key)
            wait = self._wait_stage()
            while key not in self.cache:
                self._take(wait)
                self._ask(first=key)
        return self.cache[key]

    def ask(self, shape: int, seed: int, factor: float, wide: bool, question: Dict[str, Any]) -> Dict[str, Any]:
        """One question about (shape, seed, scale) whose answer carries no outputs: {"compare": ...} or
        {"headers_only": True}."""
        self.asked += 1
        key = self.key(shape, seed, factor, wide) + f"#{self.asked}"
        self.send({"type": "ref", "shape": shape, "seed": seed, "factor": factor, "key": key, "wide": wide, **question})
        self.pending.append(key)
        wait = self._wait_stage()
        while key not in self.answers:
            self._take(wait)
        return self.answers.pop(key)

    def header(self, shape: int, seed: int, factor: float, wide: bool = False) -> Dict[str, Any]:
        """What the reference says of one draw (fingerprints; narrow or not), without its outputs where they are
        compared on the device."""
        if not self.on_device:
            return self.expected(shape, seed, factor, wide)[0]
        key = self.key(shape, seed, factor, wide)
        if key not in self.headers:
            self.headers[key] = self.ask(shape, seed, factor, wide, {"headers_only": True})
        return self.headers[key]

    def forget(self, shape: int, seed: int, factor: float, wide: bool = False) -> None:
        """Lets go of expected outputs once checked: with outputs of several GB, every one kept would hold the
        judge's memory (memory_plan.py)."""
        self.cache.pop(self.key(shape, seed, factor, wide), None)
