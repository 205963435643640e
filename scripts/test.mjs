// `npm test`: lint (eslint, ruff), the harness's pytest suite, the TypeScript suites (unit, integration, e2e), then one
// closing line `N passed, N failed` that counts every suite.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, mkdirSync } from 'node:fs';
import { missingPrerequisites, missingReport, testPython } from './test-prerequisites.mjs';

const only = process.argv.slice(2);
const want = (name) => only.length === 0 || only.includes(name);

// The system parts the chosen suites need (sshd, Slurm, Chromium, g++, numpy, pytest): named up front.
const missing = missingPrerequisites(['harness', 'unit', 'webview', 'integration', 'e2e'].filter(want));
if (missing.length) {
  console.error(missingReport(missing));
  process.exit(1);
}
// Debian's python3 when it, not the one on PATH, has numpy and pytest (as .ci/run installs them).
if (testPython() !== 'python3') process.env.KERNELEVOLVE_PYTHON = testPython();
mkdirSync('.test-output', { recursive: true });
let passed = 0;
let failed = 0;
let skipped = 0;
const problems = [];
const times = [];
const started = Date.now();

function run(name, cmd, args, env = {}) {
  console.log(`\n=== ${name}: ${cmd} ${args.join(' ')}`);
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  times.push([name, (Date.now() - t0) / 1000]);
  if (r.status !== 0) problems.push(`${name} exited ${r.status ?? r.signal}`);
  return r.status === 0;
}

if (want('typecheck')) run('typecheck', 'npx', ['tsc', '--noEmit', '-p', '.']);
// the few lint rules that catch real bugs (eslint.config.mjs, scripts/ruff.mjs)
if (want('lint')) {
  run('eslint', 'npx', ['eslint']);
  run('ruff', 'node', ['scripts/ruff.mjs']);
}
if (want('build')) run('build', 'node', ['scripts/build.mjs']);

if (want('harness')) {
  const py = testPython();
  run('harness', py, ['-m', 'pytest', 'harness/tests', '-q', '-rs', '--junitxml=.test-output/pytest.xml'], { PYTHONPATH: 'harness' });
  if (existsSync('.test-output/pytest.xml')) {
    const xml = readFileSync('.test-output/pytest.xml', 'utf8');
    const m = /<testsuite [^>]*>/.exec(xml)?.[0] ?? '';
    const num = (k) => Number(new RegExp(`${k}="(\\d+)"`).exec(m)?.[1] ?? 0);
    const total = num('tests');
    const f = num('failures') + num('errors');
    const s = num('skipped');
    passed += total - f - s; failed += f; skipped += s;
  }
}

for (const suite of ['unit', 'webview', 'integration', 'e2e']) {
  if (!want(suite) || !existsSync(`test/${suite}`)) continue;
  const out = `.test-output/vitest-${suite}.json`;
  run(suite, 'npx', ['vitest', 'run', '--project', suite, '--reporter=default', '--reporter=json', `--outputFile=${out}`]);
  if (existsSync(out)) {
    const r = JSON.parse(readFileSync(out, 'utf8'));
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  }
}

// where the time goes, project by project (CI has a limit on the whole run)
console.log('\ntime by project:');
for (const [name, s] of times) console.log(`  ${name.padEnd(12)} ${s.toFixed(0).padStart(5)} s`);
console.log(`  ${'total'.padEnd(12)} ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s`);
if (problems.length) console.log(`\nproblems: ${problems.join('; ')}`);
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(problems.length || failed ? 1 : 0);
