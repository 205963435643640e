"""Static checks for C, C++ and CUDA candidates.

Differential: anything the baseline itself already uses is allowed (a baseline with OpenMP permits OpenMP).
A source-level scan (comments stripped) gives the offending line; a scan of the built library's imported
symbols (see `forbidden_symbols`) catches what the source scan cannot see through (macros, function pointers).
"""
from __future__ import annotations

import re
from typing import Iterable, List, Optional, Set, Tuple

# (pattern, what it is). Generic words (read, time, exit...) only count as calls: `name (`.
_CALL = r"(?<![\w.>])(?:::\s*)?{}\s*\("
_WORD = r"(?<![\w])({})(?![\w])"

RULES: List[Tuple[str, str]] = [
    (_WORD.format(r"std\s*::\s*(?:thread|jthread|async)|pthread_\w+|thrd_create"), "a thread"),
    (r"#\s*pragma\s+omp\b|_Pragma\s*\(\s*\"\s*omp", "an OpenMP pragma (threads)"),
    (_WORD.format(r"omp_\w+|__gnu_parallel|tbb"), "a threading runtime"),
    (_CALL.format(r"(?:fork|vfork|clone|system|popen|posix_spawnp?|exec[lv]p?e?|execvpe|wait|waitpid)"), "a process call"),
    (_CALL.format(r"(?:exit|_exit|_Exit|quick_exit|abort|atexit|at_quick_exit|terminate)"), "a process exit"),
    (_WORD.format(r"std\s*::\s*(?:exit|_Exit|quick_exit|abort|terminate|set_terminate|atexit)"), "a process exit"),
    (_WORD.format(r"\w*rdtscp?\w*|clock_gettime|gettimeofday|timespec_get|chrono|QueryPerformanceCounter|clock64|globaltimer"), "a timer"),
    (_CALL.format(r"(?:clock|time|times|getrusage|sleep|usleep|nanosleep)"), "a timer"),
    (_CALL.format(r"(?:signal|sigaction|raise|kill|alarm|setitimer|sigprocmask)"), "a signal"),
    (_WORD.format(r"ptrace|prctl|setrlimit|sched_\w+|setpriority|nice|memfd_create|process_vm_\w+|personality|"
                  r"pkey_\w+|rdpmc|__rdpmc|userfaultfd|perf_event_open"), "process or scheduler control"),
    (_WORD.format(r"syscall|__asm__|__asm|asm"), "a raw system call or inline assembly"),
    (_WORD.format(r"dlopen|dlsym|dlvsym|dlclose|dl_iterate_phdr|RTLD_\w+"), "dynamic loading"),
    (_WORD.format(r"mmap|munmap|mprotect|mremap|madvise|brk|sbrk|shm_open|shmget"), "memory mapping"),
    (_CALL.format(r"(?:open|openat|creat|fopen|freopen|fdopen|read|write|pread|pwrite|close|ioctl|fcntl|lseek|unlink|remove|rename|dup|dup2|pipe|socket|connect|send|recv)"), "file or descriptor I/O"),  # noqa: E501
    (_WORD.format(r"getenv|secure_getenv|setenv|putenv|unsetenv|environ"), "the environment"),
    (_WORD.format(r"setjmp|longjmp|sigsetjmp|siglongjmp|_setjmp|_longjmp"), "non-local jumps"),
    (r"__attribute__\s*\(\(.*\b(?:constructor|destructor|section|ifunc|alias)\b", "a load-time constructor or section attribute"),
    (r"\[\[\s*gnu\s*::\s*(?:constructor|destructor|section|ifunc|alias)", "a load-time constructor or section attribute"),
    (r"\binit_array\b|\bfini_array\b", "a load-time constructor section"),
    (r"##", "token pasting (##), which hides names from these checks"),
    (_WORD.format(r"__builtin_(?:frame_address|return_address|extract_return_addr|trap|unreachable)"), "a stack or control-flow builtin"),
    (_WORD.format(r"Py[A-Z_]\w*|_Py\w*"), "the Python C API"),
    (_WORD.format(r"cblas_\w+|[sdcz]gemm_?|[sdcz]gemv_?|mkl_\w+|MKL_\w+|openblas_\w+|Eigen|cublas\w*|cublasLt\w*|cudnn\w*|cutlass|cufft\w*|cusparse\w*|curand\w*|thrust|cub\s*::|at\s*::|torch\s*::|ATen|c10\s*::"), "a library fallback"),  # noqa: E501
    (_WORD.format(r"cudaStream\w*|cudaLaunchHostFunc|cudaDeviceSetLimit|cudaDeviceReset|cudaSetDevice|cudaDeviceSetCacheConfig|cudaGraph\w*|cudaEvent\w*|cudaMallocHost|cudaHostAlloc|cudaHostRegister|cudaDeviceSynchronize|cudaMemcpyAsync|cudaMemsetAsync|cudaStreamAddCallback|cudaSetDeviceFlags|cudaIpc\w*|cu[A-Z]\w+"), "a CUDA stream, host callback or device-control call"),  # noqa: E501
    (r"/proc\b|/dev/|/sys/", "a path to system files"),
]

CPP_INCLUDES = {
    "cmath", "math.h", "cstddef", "stddef.h", "cstdint", "stdint.h", "cinttypes", "inttypes.h", "cstring", "string.h",
    "cstdlib", "stdlib.h", "cstdio", "stdio.h", "algorithm", "array", "vector", "limits", "climits", "limits.h",
    "cfloat", "float.h", "type_traits", "utility", "numeric", "cassert", "assert.h", "complex", "memory", "new",
    "initializer_list", "tuple", "bit", "stdbool.h", "cstdbool", "immintrin.h", "x86intrin.h", "xmmintrin.h",
    "emmintrin.h", "pmmintrin.h", "tmmintrin.h", "smmintrin.h", "nmmintrin.h", "avxintrin.h", "avx2intrin.h",
    "fmaintrin.h", "arm_neon.h", "arm_sve.h",
}
CUDA_INCLUDES = CPP_INCLUDES | {
    "cuda_runtime.h", "cuda_runtime_api.h", "cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "mma.h", "cuda_pipeline.h",
    "cooperative_groups.h", "cooperative_groups/reduce.h", "cooperative_groups/memcpy_async.h", "cuda/pipeline",
    "cuda/barrier", "cuda/std/cstdint", "vector_types.h", "device_launch_parameters.h", "math_constants.h",
    "cuda_awbarrier.h", "cuda_awbarrier_primitives.h", "crt/host_defines.h",
}

# Imported symbols of the built library that mean the same forbidden things (checked after compiling).
FORBIDDEN_SYMBOLS = re.compile(
    r"^(pthread_create|pthread_detach|thrd_create|fork|vfork|clone|system|popen|posix_spawnp?|exec\w*|wait|waitpid"
    r"|exit|_exit|_Exit|quick_exit|abort|atexit|at_quick_exit|clock|clock_gettime|gettimeofday|time|times|getrusage"
    r"|sleep|usleep|nanosleep|signal|sigaction|raise|kill|alarm|setitimer|syscall|dlopen|dlsym|dlvsym|dl_iterate_phdr"
    r"|mmap\w*|munmap|mprotect|mremap|open\w*|creat|fopen\w*|freopen|fdopen|read|write|pread\w*|pwrite\w*|close"
    r"|ioctl|fcntl\w*|unlink|socket|connect|getenv|secure_getenv|setenv|putenv|environ|__environ|_?setjmp|_?longjmp"
    r"|__longjmp_chk|sigsetjmp|siglongjmp|__sigsetjmp|Py\w+|_Py\w+|GOMP_\w+|omp_\w+|cblas_\w+|[sdcz]gemm_?|mkl_\w+"
    r"|cublas\w*|cudnn\w*|cudaStream\w*|cudaLaunchHostFunc|cudaDeviceSetLimit|cudaDeviceReset|cudaGraph\w*"
    r"|ptrace|prctl|setrlimit|sched_\w+|setpriority|nice|memfd_create|process_vm_\w+|personality|perf_event_open"
    r"|_ZNSt6thread\w*|_ZNSt6chrono\w*|_ZSt9terminatev_unused)$"
)

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def strip_comments(src: str, strings_too: bool = False) -> str:
    """Removes // and /* */ comments (and string/char literals when asked), keeping line numbers."""
    out: List[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * src.count("\n", i, j) or " ")
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + c if strings_too else src[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _findings(src: str, allowed_includes: Set[str]) -> List[Tuple[str, int, str]]:
    """(what, line number, line text) for every forbidden use in src."""
    code = strip_comments(src)
    bare = strip_comments(src, strings_too=True)
    lines = code.split("\n")
    found: List[Tuple[str, int, str]] = []
    for pattern, what in RULES:
        text = code if pattern.startswith("/proc") or "Pragma" in pattern else bare  # these look inside strings
        for m in re.finditer(pattern, text):
            line = text.count("\n", 0, m.start())
            found.append((f"{what} ({m.group(0).strip().rstrip('(').strip()})", line + 1, lines[line].strip()))
    for m in _INCLUDE.finditer(code):
        header = m.group(1).strip()
        if header not in allowed_includes:
            line = code.count("\n", 0, m.start())
            found.append((f"an #include outside the allowed headers ({header})", line + 1, lines[line].strip()))
    return found


def check(candidate: str, baseline: str, cuda: bool = False) -> Optional[str]:
    """None when the candidate passes; otherwise one sentence naming the first offending line."""
    allowed = CUDA_INCLUDES if cuda else CPP_INCLUDES
    base = {what for what, _, _ in _findings(baseline, allowed)}
    for what, line, text in _findings(candidate, allowed):
        if what in base:
            continue
        return f"The candidate uses {what} on line {line}: `{text[:160]}`; kernels may not do that."
    return None


def forbidden_symbols(candidate_syms: Iterable[str], baseline_syms: Iterable[str]) -> List[str]:
    base = set(baseline_syms)
    return sorted(s for s in set(candidate_syms) if s not in base and FORBIDDEN_SYMBOLS.match(s.split("@")[0]))
