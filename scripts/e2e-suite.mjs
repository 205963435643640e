// Bundles the in-editor mocha suites (test/suite) into one file that either @vscode/test-electron or the
// extension's test bridge (inside code-server) loads; vscode and mocha stay outside the bundle.
import { build } from 'esbuild';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

export async function buildSuites(outFile = path.resolve('.test-output', 'suite', 'index.js')) {
  await build({
    entryPoints: ['test/suite/index.ts'], outfile: outFile, bundle: true, platform: 'node', format: 'cjs', target: 'node20',
    sourcemap: 'inline', external: ['vscode', 'mocha', 'cpu-features', './crypto/build/Release/sshcrypto.node'], logLevel: 'warning',
  });
  return outFile;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(await buildSuites());
