import { describe, expect, it } from 'vitest';
import { findFunction, spliceFunction, SpliceError } from '../../../src/engine/splice';

const CPP = `// header comment with a brace { that is not code
#include <cstdio>
#define STR "}{"

static int helper(int x) { return x + 1; }

/* the kernel */
template <int N>
__global__ void __launch_bounds__(256) scale(float* out, const float* in, int n) {
  const char* s = "}";  // a brace in a string
  char c = '}';
  if (n > 0) { for (int i = 0; i < n; ++i) { out[i] = in[i] * 2.0f; } }
}

extern "C" void launch(float* out, const float* in, int n) { scale<1><<<1, 1>>>(out, in, n); }
`;

describe('splice (C, C++, CUDA)', () => {
  it('finds a definition by brace matching that ignores braces in strings, chars and comments', () => {
    const f = findFunction(CPP, 'scale', 'clike')!;
    const text = CPP.slice(f.start, f.end);
    expect(text.startsWith('template <int N>\n__global__ void __launch_bounds__(256) scale(')).toBe(true);
    expect(text.endsWith('{ out[i] = in[i] * 2.0f; } }\n}')).toBe(true);
    expect(findFunction(CPP, 'launch', 'clike')).toBeDefined();
    expect(findFunction(CPP, 'missing', 'clike')).toBeUndefined();
  });

  it('replaces only the function: every other byte stays as it was', () => {
    const variant = `__global__ void scale(float* out, const float* in, int n) {\n  int i = threadIdx.x; if (i < n) out[i] = in[i] + in[i];\n}`;
    const out = spliceFunction(CPP, 'scale', variant, { fileName: 'k.cu' });
    const f = findFunction(CPP, 'scale', 'clike')!;
    expect(out.slice(0, f.start)).toBe(CPP.slice(0, f.start));
    expect(out.slice(f.start + variant.length)).toBe(CPP.slice(f.end));
    expect(out).toContain('out[i] = in[i] + in[i];');
  });

  it('takes the function out of a whole-file answer and brings over new helpers and includes', () => {
    const answer = `#include <cstdio>\n#include <cmath>\nstatic int helper(int x) { return x + 100; }\n` +
      `static inline float twice(float v) { return v * 2.0f; }\n` +
      `__global__ void scale(float* out, const float* in, int n) { out[0] = twice(in[0]); }\n`;
    const out = spliceFunction(CPP, 'scale', answer, { fileName: 'k.cu' });
    expect(out).toContain('#include <cstdio>\n#include <cmath>\n');
    expect(out).toContain('static inline float twice(float v) { return v * 2.0f; }\n\n__global__ void scale(');
    // the original's helper is kept, not the answer's rewrite of it
    expect(out).toContain('static int helper(int x) { return x + 1; }');
    expect(out).not.toContain('x + 100');
    expect(out.endsWith(CPP.slice(findFunction(CPP, 'scale', 'clike')!.end))).toBe(true);
  });

  it('says which side lacks the function', () => {
    expect(() => spliceFunction(CPP, 'scale', 'int other() { return 1; }', { lang: 'clike' })).toThrow(SpliceError);
    expect(() => spliceFunction(CPP, 'nothere', 'void nothere() {}', { lang: 'clike' })).toThrow(/original file has no definition of nothere/);
  });
});

const PY = `import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=4)],
    key=["n"],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n,
               BLOCK: tl.constexpr):
    """Adds.

not the end of the function: this line is inside a docstring
    """
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # a comment at column 0 inside the body
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel())
    return out
`;

describe('splice (Python)', () => {
  it('finds a def with its decorators, by indentation, across multi-line signatures and docstrings', () => {
    const f = findFunction(PY, 'add_kernel', 'python')!;
    const text = PY.slice(f.start, f.end);
    expect(text.startsWith('@triton.autotune(\n')).toBe(true);
    expect(text.endsWith('mask=mask)')).toBe(true);
    expect(text).toContain('not the end of the function');
  });

  it('puts a variant back, the rest of the file byte-for-byte', () => {
    const variant = `@triton.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n    tl.store(out_ptr + pid, 0.0)\n`;
    const out = spliceFunction(PY, 'add_kernel', variant, { fileName: 'k.py' });
    const f = findFunction(PY, 'add_kernel', 'python')!;
    expect(out.slice(0, f.start)).toBe(PY.slice(0, f.start));
    expect(out.endsWith(PY.slice(f.end))).toBe(true);
    expect(out).toContain('    tl.store(out_ptr + pid, 0.0)\n\n\ndef add(x, y):');
  });

  it('re-indents a method variant written at column 0, and adds a missing import', () => {
    const cls = `import math\n\nclass K:\n    def run(self):\n        return 1\n\n    def other(self):\n        return 2\n`;
    const out = spliceFunction(cls, 'run', `import numpy as np\n\ndef run(self):\n    return np.int64(3)\n`, { lang: 'python' });
    expect(out).toBe(`import math\nimport numpy as np\n\nclass K:\n    def run(self):\n        return np.int64(3)\n\n    def other(self):\n        return 2\n`);
  });
});

// What a finder of patterns and brace counts got wrong, and the parser reads as the compiler does.
const CUDA = `#include <cuda_runtime.h>
// a comment with a brace { and a fake scale(float* x) {
template <class T>
__global__ void __launch_bounds__(256, 2) scale(T* out, const T* in, int n) {
  const char* s = "} {";
  if (n > 0) { out[0] = in[0]; }
}

extern "C" /* the launchers */ {
void launch_scale(float* out, const float* in, int n) { scale<float><<<1, 256>>>(out, in, n); }
}

struct Pair { int a, b; };
static struct Pair make_pair(int a, int b) { struct Pair p = { a, b }; return p; }
`;

describe('splice finds what brace counting missed', () => {
  it('finds a kernel templated with `template <class T>` and launch bounds, and splices a variant of it', () => {
    const f = findFunction(CUDA, 'scale', 'clike')!;
    expect(CUDA.slice(f.start, f.end)).toMatch(/^template <class T>\n__global__ void __launch_bounds__\(256, 2\) scale\([\s\S]*out\[0\] = in\[0\]; }\n}$/);
    const variant = 'template <class T>\n__global__ void __launch_bounds__(128) scale(T* out, const T* in, int n) {\n  out[threadIdx.x] = in[threadIdx.x];\n}';
    const out = spliceFunction(CUDA, 'scale', variant, { fileName: 'k.cu' });
    expect(out).toBe(CUDA.slice(0, f.start) + variant + CUDA.slice(f.end));
  });

  it('finds the functions of an extern "C" block whose brace follows a comment, and a function returning a struct', () => {
    const launch = findFunction(CUDA, 'launch_scale', 'clike')!;
    expect(CUDA.slice(launch.start, launch.end)).toMatch(/^void launch_scale\(.*\}$/);
    expect(launch.cLinkage).toBe(true);
    const pair = findFunction(CUDA, 'make_pair', 'clike')!;
    expect(CUDA.slice(pair.start, pair.end)).toMatch(/^static struct Pair make_pair\(int a, int b\) \{.*return p; \}$/);
    expect(pair.cLinkage).toBe(false);
  });

  it('takes the decorators across a comment between them and the def; a nested def and a def in a string are not the kernel', () => {
    const py = `import triton
import triton.language as tl

@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=4),
             triton.Config({"BLOCK": 256}, num_warps=8)],
    key=["n"],
)
# the JIT last: autotune wraps it
@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    """Doubles x in place.
def scale_kernel(y):
    not this one
"""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def scale(x):
    def grid(meta):
        return (triton.cdiv(x.numel(), meta["BLOCK"]),)
    scale_kernel[grid](x, x.numel())
`;
    const f = findFunction(py, 'scale_kernel', 'python')!;
    expect(py.slice(f.start, f.end)).toMatch(/^@triton\.autotune\(\n[\s\S]*# the JIT last[\s\S]*mask=offs < n\)$/);
    expect(findFunction(py, 'grid', 'python')!.topLevel).toBe(false);
    // a whole-file answer: its nested grid function is not a helper to bring over
    const answer = py.replace('tl.load(x_ptr + offs, mask=offs < n) * 2', 'tl.load(x_ptr + offs, mask=offs < n) + tl.load(x_ptr + offs, mask=offs < n)');
    const out = spliceFunction(py, 'scale_kernel', answer, { lang: 'python' });
    expect(out).toBe(answer);
  });
});
