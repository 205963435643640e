// `npm test`: the harness's pytest suite, the TypeScript suites (unit, integration, e2e), then one
// closing line `N passed, N failed` that counts every suite.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, mkdirSync } from 'node:fs';

const only = process.argv.slice(2);
const want = (name) => only.length === 0 || only.includes(name);
mkdirSync('.test-output', { recursive: true });
let passed = 0;
let failed = 0;
let skipped = 0;
const problems = [];

function run(name, cmd, args, env = {}) {
  console.log(`\n=== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) problems.push(`${name} exited ${r.status ?? r.signal}`);
  return r.status === 0;
}

if (want('typecheck')) run('typecheck', 'npx', ['tsc', '--noEmit', '-p', '.']);
if (want('build')) run('build', 'node', ['scripts/build.mjs']);

if (want('harness')) {
  const py = process.env.KERNELEVOLVE_PYTHON || 'python3';
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

if (problems.length) console.log(`\nproblems: ${problems.join('; ')}`);
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(problems.length || failed ? 1 : 0);
