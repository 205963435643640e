// `npm test`: lint (eslint, ruff), the harness's pytest suite, the TypeScript suites (unit, webview, integration,
// e2e), then each project's time and one closing line `N passed, N failed` that counts every suite.
//
// The projects run in two lanes at once (harness then integration; the rest, then e2e), and the end-to-end
// tests' VS Code installs in the background from the start: each project alone keeps about one core busy, so two
// lanes on CI's two cores halve the wall time. A lane's output goes to .test-output/<project>.log and is printed
// whole when the project ends, so logs do not interleave. `npm test -- --serial` runs one project at a time,
// with its output live.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { missingPrerequisites, missingReport, testPython } from './test-prerequisites.mjs';
import { codeServerPaths } from './e2e-install.mjs';

const args = process.argv.slice(2);
const serial = args.includes('--serial');
const only = args.filter((a) => !a.startsWith('--'));
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
const skips = [];
const problems = [];
const times = [];
const started = Date.now();

/** Runs one project; resolves to whether it exited 0. Live output when serial, else into its log. */
function run(name, cmd, cmdArgs, env = {}) {
  const header = `=== ${name}: ${cmd} ${cmdArgs.join(' ')}`;
  const t0 = Date.now();
  if (serial) console.log(`\n${header}`);
  else console.log(`=== ${name} started`);
  const log = serial ? null : `.test-output/${name}.log`;
  const out = log ? createWriteStream(log) : null;
  return new Promise((resolve) => {
    const child = spawn(cmd, cmdArgs, { stdio: serial ? 'inherit' : ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    child.stdout?.pipe(out, { end: false });
    child.stderr?.pipe(out, { end: false });
    child.on('close', (code, signal) => {
      const seconds = (Date.now() - t0) / 1000;
      times.push([name, seconds]);
      if (code !== 0) problems.push(`${name} exited ${code ?? signal}`);
      const finish = () => {
        if (log) console.log(`\n${header}\n${readFileSync(log, 'utf8')}`);
        console.log(`=== ${name} done in ${seconds.toFixed(0)} s${code === 0 ? '' : ` (exit ${code ?? signal})`}`);
        resolve(code === 0);
      };
      if (out) out.end(finish);
      else finish();
    });
  });
}

function countPytest() {
  if (!existsSync('.test-output/pytest.xml')) return;
  const xml = readFileSync('.test-output/pytest.xml', 'utf8');
  const m = /<testsuite [^>]*>/.exec(xml)?.[0] ?? '';
  const num = (k) => Number(new RegExp(`${k}="(\\d+)"`).exec(m)?.[1] ?? 0);
  const total = num('tests');
  const f = num('failures') + num('errors');
  const s = num('skipped');
  passed += total - f - s; failed += f; skipped += s;
  // each skip with its reason, printed at the end: a skip proves nothing, so none is counted away
  const unescape = (t) => t.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  for (const m of xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*>\s*<skipped[^>]*message="([^"]*)"[^>]*>([^<]*)/g)) {
    // a module skipped whole says "collection skipped"; its reason is the element's text ("file.py:12: no CUDA device here")
    const body = unescape(m[4].trim());
    const tuple = /^\('([^']*)', (\d+), 'Skipped: (.*)'\)$/.exec(body);  // pytest's (path, line, reason)
    const why = m[3] !== 'collection skipped' || !body ? m[3] : tuple ? `${path.relative(process.cwd(), tuple[1])}:${tuple[2]}: ${tuple[3]}` : body;
    skips.push(`${m[1] ? `${unescape(m[1])}::` : ''}${unescape(m[2])}: ${m[3] === 'collection skipped' ? why : unescape(why)}`);
  }
}

async function vitest(suite) {
  if (!want(suite) || !existsSync(`test/${suite}`)) return;
  const out = `.test-output/vitest-${suite}.json`;
  await run(suite, 'npx', ['vitest', 'run', '--project', suite, '--reporter=default', '--reporter=json', `--outputFile=${out}`]);
  if (existsSync(out)) {
    const r = JSON.parse(readFileSync(out, 'utf8'));
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests ?? 0);
    for (const file of r.testResults ?? []) {
      for (const t of file.assertionResults ?? []) {
        if (t.status === 'pending' || t.status === 'skipped' || t.status === 'todo') skips.push(`${path.relative(process.cwd(), file.name)}: ${t.fullName} (${t.status})`);
      }
    }
  }
}

// The e2e tests' VS Code (code-server, ~3 minutes on a fresh machine): started now, waited for before e2e. Should
// it fail, the e2e tests' own setup tries again and shows the error.
let codeServerInstall = Promise.resolve(true);
const needsCodeServer = want('e2e') && existsSync('test/e2e') && !existsSync(codeServerPaths().codeServer);
if (needsCodeServer && !serial) codeServerInstall = run('e2e-install', 'node', ['scripts/e2e-install.mjs']);

if (want('build')) await run('build', 'node', ['scripts/build.mjs']);

async function harnessThenIntegration() {
  if (want('harness')) {
    await run('harness', testPython(), ['-m', 'pytest', 'harness/tests', '-q', '-rs', '--junitxml=.test-output/pytest.xml'], { PYTHONPATH: 'harness' });
    countPytest();
  }
  await vitest('integration');
}

async function checksThenEditor() {
  if (want('typecheck')) await run('typecheck', 'npx', ['tsc', '--noEmit', '-p', '.']);
  // the few lint rules that catch real bugs (eslint.config.mjs, scripts/ruff.mjs)
  if (want('lint')) {
    await run('eslint', 'npx', ['eslint']);
    await run('ruff', 'node', ['scripts/ruff.mjs']);
  }
  await vitest('unit');
  await vitest('webview');
  await codeServerInstall;
  await vitest('e2e');
}

if (serial) {
  await checksThenEditor();
  await harnessThenIntegration();
} else {
  await Promise.all([harnessThenIntegration(), checksThenEditor()]);
}

// where the time goes, project by project (CI has a limit on the whole run)
console.log('\ntime by project:');
for (const [name, s] of times) console.log(`  ${name.padEnd(12)} ${s.toFixed(0).padStart(5)} s`);
console.log(`  ${'total'.padEnd(12)} ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s`);
if (problems.length) console.log(`\nproblems: ${problems.join('; ')}`);
if (skips.length) console.log(`\nskipped, each with its reason:\n${skips.map((x) => `  - ${x}`).join('\n')}`);
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(problems.length || failed ? 1 : 0);
