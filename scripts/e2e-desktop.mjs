// `npm run test:desktop`: the in-editor suites in a downloaded desktop VS Code through @vscode/test-electron
// (needs the network to download VS Code once; in CI the same suites run inside code-server instead).
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { buildSuites } from './e2e-suite.mjs';

const { spawnSync } = await import('node:child_process');
if (spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' }).status !== 0) process.exit(1);
const suite = await buildSuites();
const workspace = mkdtempSync(path.join(tmpdir(), 'ke-desktop-ws-'));
cpSync('examples/cpp/matmul_blocked', path.join(workspace, 'matmul_blocked'), { recursive: true });
try {
  await runTests({
    extensionDevelopmentPath: path.resolve('.'),
    extensionTestsPath: suite,
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
  });
} catch (e) {
  console.error(`desktop suites failed: ${e.message}`);
  process.exit(1);
}
