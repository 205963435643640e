// The public Triton kernels' specs (scripts/public-kernels/*/spec.py) are read as the engine and the harness
// read them, on this machine without a GPU: the sources are fetched by scripts/external-kernels.sh (a local
// mirror folder when KERNELEVOLVE_MIRRORS names one, else GitHub), the header resolves, the launcher each spec
// calls exists in the source, the harness's static check accepts the source against itself, and the shapes
// are plain data with odd sizes among them. The held-out kernels (scripts/heldout-kernels/*/spec.py, the tuner's
// grids on kernels no rule of it was written after) are read the same way, with the knobs the search moves.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { detectKnobs, searchableKnobs } from '../../src/engine/knobs';
import { writeDispatch } from '../../src/engine/tunedDispatch';
import { loadSpec } from '../../src/engine/spec';

const ROOT = path.resolve(__dirname, '../..');
const SPECS_DIR = path.join(ROOT, 'scripts/public-kernels');
const HELDOUT_DIR = path.join(ROOT, 'scripts/heldout-kernels');
const specsIn = (dir: string) => fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, 'spec.py'))).sort();
const specs = specsIn(SPECS_DIR);
const heldout = specsIn(HELDOUT_DIR);

/** What Python's own parser and the harness say about one spec and its source. */
function pythonFacts(specPath: string): {
  header: { backend: string; source: string; kernel: string };
  shapes: Array<Record<string, unknown>>;
  functions: string[];
  launchCalls: string[];
  sourceFunctions: string[];
  staticCheck: string | null;
} {
  const program = String.raw`
import ast, json, sys
from kernelevolve_harness.spec import read_header
from kernelevolve_harness import static_py
h = read_header(sys.argv[1])
tree = ast.parse(open(sys.argv[1]).read())
shapes = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "SHAPES")
functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
launch = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "launch")
calls = sorted({c.func.attr for c in ast.walk(launch) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and getattr(c.func.value, "id", "") == "k"}
               | {c.value.attr for c in ast.walk(launch) if isinstance(c, ast.Attribute) and isinstance(c.value, ast.Attribute) and getattr(c.value.value, "id", "") == "k"})
src = open(h.source).read()
stree = ast.parse(src)
source_functions = [n.name for n in ast.walk(stree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
print(json.dumps({"header": {"backend": h.backend, "source": h.source, "kernel": h.kernel}, "shapes": shapes,
                  "functions": functions, "launchCalls": calls, "sourceFunctions": source_functions,
                  "staticCheck": static_py.check(src, src)}))
`;
  const out = execFileSync('python3', ['-c', program, specPath], { env: { ...process.env, PYTHONPATH: path.join(ROOT, 'harness') }, encoding: 'utf8' });
  return JSON.parse(out);
}

describe('public Triton kernels (specs outside the repository)', () => {
  beforeAll(() => {
    // the sources are fetched once; the script is idempotent and pinned, so a present copy is the same files
    const missing = [...specs.map((d) => path.join(SPECS_DIR, d)), ...heldout.map((d) => path.join(HELDOUT_DIR, d))].some((folder) => {
      const text = fs.readFileSync(path.join(folder, 'spec.py'), 'utf8');
      return !fs.existsSync(path.resolve(folder, /^SOURCE\s*=\s*"(.+)"/m.exec(text)![1]));
    });
    if (missing) execFileSync('bash', [path.join(ROOT, 'scripts/external-kernels.sh')], { stdio: 'inherit' });
  }, 180_000);

  it('has at least three kernels, from more than one project', () => {
    expect(specs.length).toBeGreaterThanOrEqual(3);
    expect(new Set(specs.map((s) => s.split('_')[0])).size).toBeGreaterThanOrEqual(2);
  });

  for (const [dir, name] of [...specs.map((n) => [SPECS_DIR, n]), ...heldout.map((n) => [HELDOUT_DIR, n])]) {
    it(`${name}: the spec reads, its launcher exists and the source passes the static check`, async () => {
      const specPath = path.join(dir, name, 'spec.py');
      const spec = await loadSpec(specPath);
      expect(spec.backend).toBe('triton');
      expect(spec.sourcePath.startsWith(path.join(ROOT, '.external') + path.sep)).toBe(true);
      const facts = pythonFacts(specPath);
      expect(facts.header.source).toBe(spec.sourcePath);
      expect(facts.header.kernel).toBe(spec.kernel);
      expect(facts.sourceFunctions).toContain(spec.kernel);
      expect(facts.functions).toEqual(expect.arrayContaining(['inputs', 'launch', 'reference']));
      expect(facts.launchCalls.length).toBeGreaterThan(0);
      for (const called of facts.launchCalls) expect(facts.sourceFunctions).toContain(called);
      expect(facts.staticCheck).toBeNull();
      // several realistic shapes, at least one of them not a power of two
      expect(facts.shapes.length).toBeGreaterThanOrEqual(3);
      const odd = facts.shapes.some((s) => Object.values(s).some((v) => typeof v === 'number' && (v & (v - 1)) !== 0));
      expect(odd).toBe(true);
      if (dir === HELDOUT_DIR) return;
      // the launch parameters are computed in the source, which is what these kernels are here to exercise
      const source = fs.readFileSync(spec.sourcePath, 'utf8');
      expect(source).toMatch(/BLOCK_SIZE\s*,\s*num_warps\s*=\s*calculate_settings\(/);
    });
  }

  it("the held-out kernels' searched knobs: the GELU's literal block and its warps, the one-block softmax's warps alone, the looping softmaxes' block, warps and stages, the matmuls' tiles", async () => {
    const searched = async (name: string) => {
      const spec = await loadSpec(path.join(HELDOUT_DIR, name, 'spec.py'));
      const set = searchableKnobs(detectKnobs(fs.readFileSync(spec.sourcePath, 'utf8'), spec.sourcePath), spec.kernel);
      return set.knobs.map((k) => `${k.name}=${k.value}`).sort();
    };
    // both launches leave num_warps to Triton (its default, 4); the softmax's block is the row, left alone
    expect(await searched('cs336_gelu')).toEqual(['block_size=1024', 'num_warps=4']);
    expect(await searched('cs336_softmax')).toEqual([expect.stringMatching(/^num_warps@\d+=4$/)]);
    // a literal block on Triton's default warps and stages, all three searched (the warps' and stages' names carry
    // their launch's line: the module's other launches have theirs)
    expect(await searched('tm_log_softmax')).toEqual(['BLOCK_SIZE=1024', expect.stringMatching(/^num_stages@\d+=0$/), expect.stringMatching(/^num_warps@\d+=4$/)]);
    // a literal block in both launchers of one kernel (its softmax and its log-softmax, each a `forward`), on
    // Triton's default warps and stages: one knob each, written at both launches
    expect(await searched('vibetensor_softmax')).toEqual(['BLOCK_SIZE=128', 'num_stages=0', 'num_warps=4']);
    // module constants passed by name at every launch (after a small-row launch's computed `BLOCK_SIZE=` keyword):
    // the constants themselves, one knob each
    expect(await searched('hv_log_softmax')).toEqual([expect.stringMatching(/^BLOCK_SIZE@\d+=1024$/), 'NUM_STAGES=2', 'NUM_WARPS=4']);
    // literal block, warps and stages at the forward's launch, all three searched
    expect(await searched('mng_softcapped_ce')).toEqual(['BLOCK_SIZE=1024', 'num_stages=4', 'num_warps=8']);
    // tiles from the launcher's parameter defaults, passed by position; the stages left to Triton (0: as launched)
    expect(await searched('nexxex_matmul')).toEqual(['BLOCK_K=32', 'BLOCK_M=128', 'BLOCK_N=128', 'num_stages=0', 'num_warps=4']);
    // tiles, warps and stages picked per shape by tuple assignments of literals (computed: 0), the tiles stepped by in a
    // helper the kernel calls; its grouping of programs a literal at the launch
    expect(await searched('mng_xxt')).toEqual(['BLOCK_SIZE_K=0', 'BLOCK_SIZE_M=0', 'BLOCK_SIZE_N=0', 'GROUP_SIZE_M=8', 'num_stages=0', 'num_warps=0']);
  });

  it("a per-shape table can be written for the held-out XXT, keyed on its launcher's (M, K), which tell its spec's shapes apart", async () => {
    const spec = await loadSpec(path.join(HELDOUT_DIR, 'mng_xxt', 'spec.py'));
    const source = fs.readFileSync(spec.sourcePath, 'utf8');
    const shapes = pythonFacts(path.join(HELDOUT_DIR, 'mng_xxt', 'spec.py')).shapes;
    const r = writeDispatch(source, detectKnobs(source, spec.sourcePath), shapes.map((shape, i) => ({
      shape, values: { BLOCK_SIZE_M: [64, 128, 256][i % 3], BLOCK_SIZE_N: 128, BLOCK_SIZE_K: 64, num_warps: 8, num_stages: 3 },
    })));
    if ('error' in r) throw new Error(r.error);
    expect(r.tables[0].keyNames).toEqual(['M', 'K']);
    expect(r.tables[0].rows).toHaveLength(shapes.length);
    execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], { input: r.source });
  });

  it("a per-shape table can be written for the held-out nexxex matmul, whose tiles are defaults of its launcher's parameters", async () => {
    const spec = await loadSpec(path.join(HELDOUT_DIR, 'nexxex_matmul', 'spec.py'));
    const source = fs.readFileSync(spec.sourcePath, 'utf8');
    const shapes = pythonFacts(path.join(HELDOUT_DIR, 'nexxex_matmul', 'spec.py')).shapes;
    const r = writeDispatch(source, detectKnobs(source, spec.sourcePath), shapes.map((shape, i) => ({
      shape, values: { BLOCK_M: 128, BLOCK_N: [256, 64, 128][i % 3], BLOCK_K: 64, num_warps: 8 },
    })));
    if ('error' in r) throw new Error(r.error);
    expect(r.tables[0].keyNames).toEqual(['M', 'K', 'N']);
    expect(r.tables[0].rows).toHaveLength(shapes.length);
    expect(r.source).toMatch(/def matmul_triton\(A, B, BLOCK_M=128, BLOCK_N=None, BLOCK_K=None\):/);
    execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], { input: r.source });
  });
});
