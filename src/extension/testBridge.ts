// In-editor test suites in a VS Code we cannot drive with @vscode/test-electron (code-server in CI): when
// KERNELEVOLVE_TEST_SUITE names a suite bundle, the extension runs it after activation and writes the
// results to KERNELEVOLVE_TEST_RESULTS, which the end-to-end driver reads.
import { promises as fs } from 'node:fs';
import { createRequire } from 'node:module';

export interface SuiteResults {
  passed: number;
  failed: number;
  failures: { title: string; error: string }[];
  tests: { title: string; state: 'passed' | 'failed'; durationMs?: number }[];
}

export async function runTestSuiteIfAsked(log: (line: string) => void): Promise<void> {
  const suite = process.env.KERNELEVOLVE_TEST_SUITE;
  const out = process.env.KERNELEVOLVE_TEST_RESULTS;
  if (!suite || !out) return;
  let results: SuiteResults;
  try {
    // The bundle lives outside the extension and is loaded at run time, never bundled into it.
    const mod = createRequire(__filename)(suite) as { runSuites(): Promise<SuiteResults> };
    log(`Running test suite ${suite}`);
    results = await mod.runSuites();
  } catch (e) {
    results = { passed: 0, failed: 1, failures: [{ title: 'loading the suite', error: (e as Error).stack ?? String(e) }], tests: [] };
  }
  // Written whole under another name and renamed: the driver polls for the file and must never read it half-written.
  await fs.writeFile(`${out}.part`, JSON.stringify(results, null, 2));
  await fs.rename(`${out}.part`, out);
  log(`Test suite done: ${results.passed} passed, ${results.failed} failed`);
}
