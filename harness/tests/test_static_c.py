"""Static checks on C/C++/CUDA candidates: each forbidden thing is rejected with its line; the baseline's own
uses stay allowed; the built library's imported symbols catch what hides from the source scan."""
import pytest

from conftest import NAIVE, Harness
from kernelevolve_harness import static_c

CASES = [
    ("thread that finishes after return", "#include <thread>\n", '  std::thread([=] { C[0] = 0; }).detach();'),
    ("pthread", "", "  pthread_t t; pthread_create(&t, 0, 0, 0);"),
    ("std::async", "#include <future>\n", "  auto f = std::async([] { return 1; });"),
    ("openmp", "", "#pragma omp parallel for\n  for (int i = 0; i < M; ++i) C[i] = 0;"),
    ("fork", "", "  if (fork() == 0) { }"),
    ("vfork", "", "  vfork();"),
    ("system", "#include <cstdlib>\n", '  system("true");'),
    ("popen", "", '  popen("ls", "r");'),
    ("execve", "", "  execve(0, 0, 0);"),
    ("exit", "#include <cstdlib>\n", "  exit(0);"),
    ("_exit", "", "  _exit(0);"),
    ("quick_exit", "", "  quick_exit(0);"),
    ("abort", "#include <cstdlib>\n", "  abort();"),
    ("atexit", "", "  atexit(0);"),
    ("std::terminate", "", "  std::terminate();"),
    ("clock", "#include <ctime>\n", "  clock();"),
    ("time", "", "  time(nullptr);"),
    ("chrono", "#include <chrono>\n", "  auto t = std::chrono::steady_clock::now();"),
    ("rdtsc", "#include <x86intrin.h>\n", "  auto t = __rdtsc();"),
    ("gettimeofday", "", "  gettimeofday(0, 0);"),
    ("clock_gettime", "", "  clock_gettime(0, 0);"),
    ("signal", "#include <csignal>\n", "  signal(11, 0);"),
    ("syscall", "", "  syscall(60, 0);"),
    ("inline asm", "", '  asm volatile("nop");'),
    ("dlopen", "", '  dlopen("libm.so", 0);'),
    ("mmap", "", "  mmap(0, 4096, 3, 34, -1, 0);"),
    ("mprotect", "", "  mprotect(0, 0, 0);"),
    ("fopen", "#include <cstdio>\n", '  fopen("/tmp/x", "w");'),
    ("write", "", "  write(1, C, 4);"),
    ("/proc", "", '  const char* p = "/proc/self/mem";'),
    ("getenv", "#include <cstdlib>\n", '  getenv("HOME");'),
    ("setjmp", "", "  jmp_buf b; setjmp(b);"),
    ("constructor", '__attribute__((constructor)) static void init() {}\n', ""),
    ("destructor", '[[gnu::destructor]] static void fini() {}\n', ""),
    ("token pasting", "#define CAT(a, b) a##b\n", ""),
    ("include", "#include <unistd.h>\n", ""),
    ("cblas", "", "  cblas_sgemm(0, 0, 0, M, N, K, 1, A, K, B, N, 0, C, N);"),
    ("python api", "", '  PyRun_SimpleString("import os");'),
    ("frame address", "", "  void* f = __builtin_frame_address(1);"),
    ("ptrace", "", "  ptrace(0, 0, 0, 0);"),
    ("affinity", "", "  sched_setaffinity(0, 0, 0);"),
]


@pytest.mark.parametrize("name,prelude,body", CASES, ids=[c[0] for c in CASES])
def test_forbidden_construct_is_rejected_with_its_line(name: str, prelude: str, body: str) -> None:
    src = prelude + 'extern "C" void mm(const float* A, const float* B, float* C, int M, int N, int K) {\n' + body + "\n}\n"
    reason = static_c.check(src, "")
    assert reason is not None, name
    assert "line" in reason and "`" in reason


def test_comments_and_strings_do_not_trigger_rejections() -> None:
    src = ('// uses no fork(), no exit(0), no std::thread\n/* clock() time() */\n#include <cstdio>\n'
           'extern "C" void mm(float* C) { printf("time(%d) exit(\\n", 1); puts("fork()"); }\n')
    assert static_c.check(src, "") is None


def test_what_the_baseline_uses_is_allowed() -> None:
    base = "#pragma omp parallel for\nfor (int i = 0; i < n; ++i) c[i] = 0;\n"
    cand = "#pragma omp parallel for simd\nfor (int i = 0; i < n; ++i) c[i] = 1;\n"
    assert static_c.check(cand, base) is None
    assert static_c.check(cand, "") is not None


def test_cuda_streams_and_host_callbacks_are_rejected() -> None:
    for call in ("cudaStreamCreate(&s);", "cudaLaunchHostFunc(0, 0, 0);", "cudaDeviceSetLimit(x, 1);",
                 "cublasSgemm(h);", "cudaDeviceSynchronize();"):
        assert static_c.check("#include <cuda_runtime.h>\nvoid f() { " + call + " }\n", "", cuda=True), call
    assert static_c.check("#include <cuda_fp16.h>\n__global__ void k(float* x) { x[0] = 1; }\n", "", cuda=True) is None


def test_a_forbidden_call_hidden_from_the_source_scan_is_caught_in_the_built_library(harness: Harness) -> None:
    # `usleep` is declared through a typedef and called through a pointer: no `usleep(` in the source.
    prelude = 'using sleep_fn = int(unsigned);\nextern "C" sleep_fn usleep;\nstatic sleep_fn* volatile nap = usleep;\n'
    v = harness.mm("  nap(1);\n" + NAIVE, prelude)
    assert v["status"] == "static_rejected", v
    assert "usleep" in v["reason"]


def test_printf_is_allowed(harness: Harness) -> None:
    v = harness.mm('  printf("hello from the kernel\\n");\n' + NAIVE, "#include <cstdio>\n")
    assert v["status"] == "ok", v


def test_a_rejected_candidate_is_reported_by_the_cli(harness: Harness) -> None:
    v = harness.mm("  std::thread([=] { C[0] = 0; }).detach();\n" + NAIVE, "#include <thread>\n")
    assert v["status"] == "static_rejected"
    assert "a thread" in v["reason"] and "std::thread" in v["reason"]


def test_an_openmp_baseline_permits_an_openmp_candidate(harness: Harness) -> None:
    from conftest import SPECS
    spec = SPECS / "openmp" / "spec.py"
    cand = (SPECS / "openmp" / "k.cpp").read_text().replace("2.0f * x[i]", "x[i] + x[i]")
    v, _ = harness.evaluate(spec, cand)
    assert v["status"] == "ok", v


def test_pragma_operator_openmp_is_rejected() -> None:
    assert static_c.check('void f() { _Pragma("omp parallel for") for (;;) {} }', "") is not None
