/// <reference types="mocha" />
// Activation stays small: activate() registers forwarders only; the extension's core (tree-sitter, shiki,
// ssh2, openai, the engine) loads on first use. The figures go next to the results for docs/benchmarks.md.
import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { kernelEvolve } from './extensionApi';

suite('Activation', () => {
  test('activate() takes at most 100 ms; the core loads on first use', async () => {
    const api = await kernelEvolve();
    const { activateMs, coreLoadMs } = api.timings;
    const out = process.env.KERNELEVOLVE_TEST_RESULTS;
    if (out) writeFileSync(path.join(path.dirname(out), 'activation.json'), JSON.stringify({ activateMs, coreLoadMs }, null, 2));
    assert.ok(activateMs <= 100, `activate() took ${activateMs.toFixed(1)} ms`);
    assert.ok(coreLoadMs !== undefined && coreLoadMs > 0, 'the core was loaded by the first use, after activation');
  });
});
