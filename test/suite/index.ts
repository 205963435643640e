// The in-editor suites (mocha, tdd). Two ways in: @vscode/test-electron calls run() on a desktop
// (`npm run test:desktop`); in CI the extension calls runSuites() inside code-server when
// KERNELEVOLVE_TEST_SUITE names this bundle, and the end-to-end driver reads the results file.
import Mocha from 'mocha';

export interface SuiteResults {
  passed: number;
  failed: number;
  failures: { title: string; error: string }[];
  tests: { title: string; state: 'passed' | 'failed'; durationMs?: number }[];
}

export async function runSuites(): Promise<SuiteResults> {
  const mocha = new Mocha({ ui: 'tdd', timeout: 180_000, color: false, reporter: 'spec' });
  // KERNELEVOLVE_TEST_GREP runs only the tests whose full title matches (while working on one suite).
  if (process.env.KERNELEVOLVE_TEST_GREP) mocha.grep(new RegExp(process.env.KERNELEVOLVE_TEST_GREP));
  // Defines suite()/test() as globals before the suite modules are evaluated (they load lazily below).
  mocha.suite.emit('pre-require', globalThis, 'kernelevolve-suites', mocha);
  await import('./activation.suite');
  await import('./settings.suite');
  await import('./kernelLenses.suite');
  await import('./specDraft.suite');
  await import('./acceptEdit.suite');
  await import('./sidePanel.suite');
  await import('./commands.suite');
  await import('./runLifecycle.suite');
  await import('./writeKernel.suite');
  const results: SuiteResults = { passed: 0, failed: 0, failures: [], tests: [] };
  await new Promise<void>((resolve) => {
    const runner = mocha.run(() => resolve());
    runner.on('pass', (t) => { results.passed++; results.tests.push({ title: t.fullTitle(), state: 'passed', durationMs: t.duration }); });
    runner.on('fail', (t, err: Error) => {
      results.failed++;
      results.tests.push({ title: t.fullTitle(), state: 'failed', durationMs: t.duration });
      results.failures.push({ title: t.fullTitle(), error: err.stack ?? String(err) });
    });
  });
  return results;
}

/** The entry @vscode/test-electron expects: resolves when every test passed. */
export async function run(): Promise<void> {
  const r = await runSuites();
  if (r.failed) throw new Error(`${r.failed} in-editor test(s) failed:\n${r.failures.map((f) => `${f.title}: ${f.error}`).join('\n')}`);
}
