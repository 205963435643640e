"""The instruction-cache flush before each event-timed GPU sample: a kernel of CODE_FLUSH_BYTES of straight-line
code that every SM runs through once, so the timed kernel fetches its own code afresh, as it does in a model's
forward pass where other kernels ran before it.

Why: on an H200 the softmax example's 2048x4097 shape (one warp a 8192-element row: a long unrolled program) ran
49 us right after a call of itself and 60 us after a call of any other kernel (another load of the same source
included), though the refill, the L2 flush and the cover ran in between (scripts/gpu/order_effect.py). What is
left of a kernel's code in an SM's instruction caches after those small kernels depends on where the code lies in
memory: in the harness, the candidate (loaded first) read 51-56 us warm where the baseline read 49-50, run after
run, for the same source, while both read 60 us cold. Timing every sample cold takes the code's placement out of
the ratio and keeps the code's size in it (a candidate unrolled into a longer program pays for it, as it would
among other kernels).

The kernel is PTX written here (a chain of fused multiply-adds, each with its own constant, so no compiler can
fold them; its result stored only under a flag that is never set), loaded through the CUDA driver (which
compiles it for the device and keeps the result in its own disk cache), and launched on torch's current stream.
Where any of that is not to be had, there is no code flush (None), and the timing says so."""
from __future__ import annotations

import ctypes
import struct
import time
from typing import Any, Optional

# On an H200, 64 KiB of code already left the softmax shape above as cold as 256 KiB and 1 MiB did (60 us); 128 KiB
# for a margin: it runs in about 32 us on the device (64 KiB: 23 us, 256 KiB: 57-65 us), and the driver compiles it
# in 0.9 s, once a host (1 MiB: 81 s)
CODE_FLUSH_BYTES = 128 << 10
INSTRUCTION_BYTES = 16  # one SASS instruction on Volta and later
BLOCKS_PER_SM = 2  # one warp each: every SM gets at least one
ENTRY = "kernelevolve_code_flush"


def ptx(n_instructions: int) -> str:
    """The flush kernel's PTX: n fused multiply-adds in a chain, then a store that only a nonzero flag reaches."""
    lines = [
        ".version 6.0", ".target sm_50", ".address_size 64", "",
        f".visible .entry {ENTRY}(.param .u64 out, .param .u32 flag)", "{",
        "  .reg .pred %p;", "  .reg .b32 %r;", "  .reg .f32 %f;", "  .reg .b64 %rd;",
        "  ld.param.u32 %r, [flag];", "  cvt.rn.f32.u32 %f, %r;",
    ]
    for i in range(n_instructions):
        # a distinct small addend each time (bits of a float in [2^-10, 2^-9)), a multiplier just above one
        addend = struct.unpack(">I", struct.pack(">f", 2.0 ** -10 * (1.0 + (i % 8191) / 8192.0)))[0]
        lines.append(f"  fma.rn.f32 %f, %f, 0f3F800001, 0f{addend:08X};")
    lines += ["  setp.eq.u32 %p, %r, 0;", "  @%p bra DONE;", "  ld.param.u64 %rd, [out];",
              "  cvta.to.global.u64 %rd, %rd;", "  st.global.f32 [%rd], %f;", "DONE:", "  ret;", "}", ""]
    return "\n".join(lines)


class CodeFlush:
    """The loaded flush kernel: call it to queue one flush on torch's current stream."""

    def __init__(self, torch: Any, nbytes: int = CODE_FLUSH_BYTES) -> None:
        self.torch = torch
        self.nbytes = nbytes
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.sink = torch.zeros(1, dtype=torch.float32, device="cuda")  # torch's context, current on this thread;
        # the store's target, never written (the flag is 0)
        t0 = time.perf_counter()
        module, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        source = ptx(max(1, nbytes // INSTRUCTION_BYTES)).encode() + b"\0"
        self._check(self.lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(source)), "cuModuleLoadData")
        self._check(self.lib.cuModuleGetFunction(ctypes.byref(self.fn), module, ENTRY.encode()), "cuModuleGetFunction")
        self.load_ms = (time.perf_counter() - t0) * 1000.0
        self.module = module
        self.args = (ctypes.c_uint64(self.sink.data_ptr()), ctypes.c_uint32(0))
        self.params = (ctypes.c_void_p * 2)(*[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in self.args])
        self.blocks = BLOCKS_PER_SM * torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        self.launch = self.lib.cuLaunchKernel

    def _check(self, status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what} returned CUDA error {status}")

    def __call__(self) -> None:
        stream = ctypes.c_void_p(self.torch.cuda.current_stream().cuda_stream)
        self._check(self.launch(self.fn, self.blocks, 1, 1, 32, 1, 1, 0, stream, self.params, None), "cuLaunchKernel")


_LOADED: dict = {}


def code_flush(torch: Any, nbytes: int = CODE_FLUSH_BYTES) -> Optional[CodeFlush]:
    """This process's code flush of nbytes (loaded once), or None where the driver or the device will not have it."""
    if nbytes not in _LOADED:
        try:
            _LOADED[nbytes] = CodeFlush(torch, nbytes)
        except Exception:
            _LOADED[nbytes] = None
    return _LOADED[nbytes]
