// Runs a Triton launcher for real in Python, on a machine without a GPU: small stand-ins for torch and triton
// give the host side what a launcher touches (shapes, strides, allocation, next_power_of_2, cdiv, the device's
// compute capability), and the kernel object records each launch's grid and meta-parameters instead of running.
// What a launcher computes and passes is then exactly what Python computes from the candidate's source.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const STUBS: Record<string, string> = {
  'torch/__init__.py': `
class _Cuda:
    capability = (9, 0)
    def get_device_capability(self, device=None):
        return self.capability
cuda = _Cuda()
float32 = "float32"
class Tensor:
    def __init__(self, shape):
        self.shape = tuple(shape)
        self.device = "cuda"
    def stride(self, i):
        s = 1
        for d in self.shape[i + 1:]:
            s *= d
        return s
    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n
    def size(self, i=None):
        return self.shape if i is None else self.shape[i]
    @property
    def ndim(self):
        return len(self.shape)
def empty_like(x):
    return Tensor(x.shape)
def empty(*shape, **kw):
    return Tensor(shape[0] if isinstance(shape[0], tuple) else shape)
`,
  'triton/__init__.py': `
LAUNCHES = []
class _Kernel:
    def __init__(self, fn):
        self.fn = fn
    def __getitem__(self, grid):
        def launch(*args, **meta):
            # numbers passed by position are recorded under the kernel's parameter names too
            code = self.fn.__code__
            numbers = {n: a for n, a in zip(code.co_varnames[:code.co_argcount], args) if isinstance(a, (int, float))}
            LAUNCHES.append({"kernel": self.fn.__name__, "grid": grid, **numbers, **meta})
        return launch
def jit(fn):
    return _Kernel(fn)
def next_power_of_2(n):
    p = 1
    while p < n:
        p *= 2
    return p
def cdiv(a, b):
    return (a + b - 1) // b
`,
  'triton/language/__init__.py': `
class constexpr:
    pass
`,
};

/** A Python for the standard library only: the system one starts in a fraction of a version manager's shim's time. */
export const PLAIN_PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

export class PythonLaunches {
  private readonly cache = new Map<string, Array<Record<string, unknown>>>();
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-launch-'));

  constructor() {
    for (const [file, text] of Object.entries(STUBS)) {
      fs.mkdirSync(path.dirname(path.join(this.dir, file)), { recursive: true });
      fs.writeFileSync(path.join(this.dir, file), text);
    }
  }

  /** Imports `source` as the module `candidate`, runs `calls` (Python; `Tensor((rows, cols))` makes an input), returns the launches. */
  run(source: string, calls: string, capability = '(9, 0)'): Array<Record<string, unknown>> {
    const key = JSON.stringify([source, calls, capability]);
    const hit = this.cache.get(key);
    if (hit) return hit;
    fs.writeFileSync(path.join(this.dir, 'candidate.py'), source);
    const program = `import json, sys, torch, triton
torch.cuda.capability = ${capability}
import candidate
from torch import Tensor
${calls}
print(json.dumps(triton.LAUNCHES))`;
    const out = execFileSync(PLAIN_PYTHON, ['-B', '-c', program], { cwd: this.dir, env: { ...process.env, PYTHONPATH: this.dir }, encoding: 'utf8' });
    const launches = JSON.parse(out.trim().split('\n').pop()!);
    this.cache.set(key, launches);
    return launches;
  }

  dispose(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
