// The in-editor mocha suites (test/suite, also runnable on a desktop with `npm run test:desktop`) run here
// inside code-server: the extension runs the bundle named by KERNELEVOLVE_TEST_SUITE after activation and
// writes the results to KERNELEVOLVE_TEST_RESULTS.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain .mjs helper shared with the command line
import { buildSuites } from '../../scripts/e2e-suite.mjs';
import { CodeServer, exampleWorkspace, OUTPUT, readJson } from './codeServer';
import { Workbench } from './pageObjects/workbench';

interface SuiteResults {
  passed: number;
  failed: number;
  failures: { title: string; error: string }[];
  tests: { title: string; state: string }[];
}

const results = path.join(OUTPUT, 'editor-suites.json');
let server: CodeServer | undefined;

afterAll(async () => {
  await server?.stop();
});

describe('in-editor suites in code-server', () => {
  it('pass: settings, spec drafting, per-change accept with clean undo, panel replay, host commands, stop and resume, write a kernel for an operator', async () => {
    mkdirSync(OUTPUT, { recursive: true });
    rmSync(results, { force: true });
    const suite = (await buildSuites()) as string;
    server = new CodeServer({
      workspace: exampleWorkspace('cpp/matmul_blocked'),
      env: { KERNELEVOLVE_TEST_SUITE: suite, KERNELEVOLVE_TEST_RESULTS: results },
    });
    const page = await server.start();
    // Opening a C++ file activates the extension, which then runs the suites.
    await new Workbench(page).openFile('matmul_blocked/matmul.cpp');
    const deadline = Date.now() + 480_000;
    while (!existsSync(results) && Date.now() < deadline) await page.waitForTimeout(1000);
    if (!existsSync(results)) {
      await page.screenshot({ path: path.join(OUTPUT, 'editor-suites-timeout.png') });
      throw new Error(`The suites wrote no results within 8 minutes.\n${server.extensionLog()}`);
    }
    const r = readJson<SuiteResults>(results);
    writeFileSync(path.join(OUTPUT, 'editor-suites-summary.txt'), r.tests.map((t) => `${t.state}  ${t.title}`).join('\n') + '\n');
    expect(r.failures.map((f) => `${f.title}: ${f.error.split('\n').slice(0, 6).join('\n')}`)).toEqual([]);
    expect(r.tests.map((t) => t.title)).toEqual(expect.arrayContaining([
      'Activation activate() takes at most 100 ms; the core loads on first use',
      'Settings a broken host entry is reported with the field and what to write',
      'Spec drafting Evolve on a kernel without a spec drafts one beside it and opens it before any run',
      'Accepting a variant the CodeLens offers the variant over the kernel',
      'Accepting a variant Accept shows the variant as an inline diff; each change is accepted or rejected on its own; nothing is saved',
      'Accepting a variant one Undo of an accepted variant leaves the file clean, and the lens offers the variant again',
      'Accepting a variant a renamed kernel is refused and the file is left as it is',
      'Side panel says ready when shown, and again after being hidden and shown',
      'Host commands Profile Kernel at Cursor judges the kernel and opens a profile report tab',
      'Run lifecycle Stop ends a running run after confirming its leaders; Resume continues it; a second Stop ends it at once',
      'Write a kernel for a PyTorch or numpy operator the lens is over the operator; without an LLM the problem is drafted for review and no run starts',
      'Write a kernel for a PyTorch or numpy operator with an LLM, the problem evolves and Accept writes the kernel next to the module and makes the operator call it',
    ]));
    expect(r.passed).toBe(r.tests.length);
  });
});
