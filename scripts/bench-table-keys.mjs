// `node scripts/bench-table-keys.mjs [SPEC ...]`: whether a per-shape table's kernels are the kernels its rows'
// candidates compiled. Triton keys a compiled kernel on the kernel's source and its first line (and those of the
// @triton.jit functions it calls), then the launch's specialization and options: where a table moves a kernel down
// the file, each of its shapes is compiled again when the table is judged, though each row's launch was compiled
// when its candidate was. For each spec (default: the softmax example and the public Liger RMSNorm and softmax,
// whose launchers compute their launch parameters), the tuner's table is written for settings that differ per shape,
// with each shape's setting alone as that shape's winner (the tuner's single-setting candidate), and Python with
// Triton reads every @triton.jit function's key (`JITFunction.cache_key`) in each file. It prints, per kernel, its
// first line and whether the table's key is the winner's; the same for the table where it was placed before
// 2026-12-05 (above the file's first definition; the writer of commit 07ce4e6, from git); and, for the first kernel, what Triton's compile of one
// specialization for sm_90 costs in each file, with the winner's compile in the cache (needs Triton; no GPU).
// Needs: Python with torch and triton (PYTHON, default python3); the public kernels need .external/
// (bash scripts/external-kernels.sh).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PYTHON = process.env.PYTHON || 'python3';
const specs = process.argv.slice(2).length ? process.argv.slice(2)
  : ['examples/triton/softmax/spec.py', 'scripts/public-kernels/liger_rms_norm/spec.py', 'scripts/public-kernels/liger_softmax/spec.py'];

async function bundle(contents, resolveDir) {
  const { build } = await import('esbuild');
  const outfile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ke-table-keys-')), 'engine.cjs');
  await build({ stdin: { contents, resolveDir, loader: 'ts' }, bundle: true, platform: 'node', format: 'cjs', outfile, logLevel: 'warning' });
  return createRequire(import.meta.url)(outfile);
}

const loadEngine = () => bundle(['knobs', 'tunedDispatch', 'kernelLocator', 'spec'].map((m) => `export * from './src/engine/${m}';`).join('\n'), ROOT);

// the table's writer as it was before 2026-12-05 (the table above the file's first definition), from the history
const BEFORE = '07ce4e6';
async function loadBefore() {
  try {
    const text = execFileSync('git', ['show', `${BEFORE}:src/engine/tunedDispatch.ts`], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const before = await bundle(`${text}\nexport { KernelLocator } from './kernelLocator';\n`, path.join(ROOT, 'src/engine'));
    await before.KernelLocator.get(); // that bundle's own copy of the parser
    return before;
  } catch {
    return undefined; // no history here (a copy without .git): that column is left out
  }
}

// In Python: the spec's shapes; each file's @triton.jit functions (module globals, or what an autotuner or
// heuristics wraps) with their first line and key; and one compile of the first kernel for sm_90.
const PY = String.raw`
import importlib.util, json, os, sys, tempfile, time
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
import triton
from triton.runtime.jit import JITFunction
job = json.load(sys.stdin)
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m
if job["what"] == "shapes":
    sys.path.insert(0, os.path.dirname(job["spec"]))
    print(json.dumps(load(job["spec"], "ke_spec").SHAPES))
    sys.exit(0)
sys.path[:0] = job["path"]
out = {}
for i, f in enumerate(job["files"]):
    m = load(f, "ke_file_%d" % i)
    keys = {}
    for name, v in vars(m).items():
        for _ in range(4):  # an autotuner's or heuristics' kernel
            if isinstance(v, JITFunction) or not hasattr(v, "fn"):
                break
            v = v.fn
        if isinstance(v, JITFunction) and v.__module__ == m.__name__:
            keys[name] = [v.starting_line_number, v.cache_key]
    out[f] = keys
    first = job.get("compile")
    if first and first in vars(m):
        from triton.compiler import ASTSource
        from triton.backends.compiler import GPUTarget
        fn = vars(m)[first]
        params = list(fn.signature.parameters.values())
        sig = {p.name: ("constexpr" if "constexpr" in str(p.annotation) else "*fp32" if p.name.endswith("ptr") else "i32")
               for p in params}
        consts = {p.name: 64 if "BLOCK" in p.name else 1 for p in params if sig[p.name] == "constexpr"}
        t = time.monotonic()
        try:
            triton.compile(ASTSource(fn, sig, consts), target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
            keys["_compile_ms"] = round((time.monotonic() - t) * 1000, 1)
        except Exception as e:  # a specialization this guess cannot compile: the keys above still tell
            keys["_compile_ms"] = "n/a (%s)" % type(e).__name__
print(json.dumps(out))
`;

const python = (job) => JSON.parse(execFileSync(PYTHON, ['-c', PY], { input: JSON.stringify(job), cwd: ROOT, encoding: 'utf8', timeout: 300_000 }));

const E = await loadEngine();
const old = await loadBefore();
await E.KernelLocator.get();
for (const rel of specs) {
  const specPath = path.resolve(ROOT, rel);
  const spec = E.parseSpecText(fs.readFileSync(specPath, 'utf8'), specPath);
  if (!fs.existsSync(spec.sourcePath)) {
    console.log(`${rel}: ${path.relative(ROOT, spec.sourcePath)} is missing (bash scripts/external-kernels.sh); left out`);
    continue;
  }
  const src = fs.readFileSync(spec.sourcePath, 'utf8');
  const shapes = python({ what: 'shapes', spec: specPath });
  const set = E.searchableKnobs(E.detectKnobs(src, spec.sourcePath), spec.kernel);
  // a setting per shape that differs from the original, on the first knob a table can dispatch
  let table;
  let entries;
  for (const k of set.knobs) {
    const domain = E.domainOf(E.roleOf(k.name), Number(k.value), 'triton').filter((v) => v !== k.value && v !== 0);
    if (!domain.length) continue;
    entries = shapes.map((shape, i) => ({ shape, values: { [k.name]: domain[i % domain.length] } }));
    const r = E.writeDispatch(src, set, entries);
    if (!('error' in r)) {
      table = r;
      break;
    }
  }
  if (!table) {
    console.log(`${rel}: no knob of ${spec.kernel} can be dispatched per shape; left out`);
    continue;
  }
  let before;
  try {
    before = old?.writeDispatch(src, set, entries);
  } catch {
    before = undefined; // the earlier writer no longer fits today's modules: that column is left out
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-table-keys-'));
  const files = { winner: E.applyKnobs(src, set, entries[0].values), table: table.source, ...(before?.source ? { before: before.source } : {}) };
  for (const [name, s] of Object.entries(files)) fs.writeFileSync(path.join(dir, `${name}.py`), s);
  const specDir = path.dirname(specPath);
  const pathFromSpec = [...fs.readFileSync(specPath, 'utf8').matchAll(/os\.path\.join\(_EXTERNAL, "([^"]+)"(?:, "([^"]+)")?\)/g)]
    .map((m) => path.join(ROOT, '.external', m[1], m[2] ?? ''));
  const got = python({ what: 'keys', files: Object.keys(files).map((n) => path.join(dir, `${n}.py`)), path: [path.dirname(spec.sourcePath), specDir, ...pathFromSpec],
    compile: spec.kernel });
  const [w, t, b = {}] = Object.keys(files).map((n) => got[path.join(dir, `${n}.py`)]);
  const kernels = Object.keys(w).filter((n) => !n.startsWith('_compile'));
  const same = (x) => kernels.filter((n) => x[n] && x[n][1] === w[n][1]).length;
  console.log(`${rel}: table of ${table.tables.map((x) => x.launcher).join(', ')} (${Object.keys(entries[0].values)[0]} per shape); `
    + `kernels with the winner's key: ${same(t)} of ${kernels.length} in the table, ${same(b)} of ${kernels.length} as placed before`);
  for (const n of kernels) {
    console.log(`  ${n.padEnd(34)} line ${String(w[n][0]).padStart(4)}: table line ${String(t[n]?.[0]).padStart(4)} ${t[n]?.[1] === w[n][1] ? 'same key' : 'NEW KEY '}; `
      + `before: line ${String(b[n]?.[0]).padStart(4)} ${b[n]?.[1] === w[n][1] ? 'same key' : 'new key'}`);
  }
  if (w._compile_ms !== undefined) {
    console.log(`  compiling ${spec.kernel} once for sm_90 (ms): winner ${w._compile_ms} (cold), table ${t._compile_ms}, as placed before ${b._compile_ms}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
