// `npm run package`: builds the bundles and packs the VSIX (kernelevolve-<version>.vsix, or the path given
// as the first argument), with docs/marketplace.md as its README (its links point inside the VSIX).
// Dependencies are bundled by esbuild, so node_modules stays out of the VSIX.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export function packageVsix(out) {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  const target = out ?? `${pkg.name}-${pkg.version}.vsix`;
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (build.status !== 0) throw new Error('the build failed; see the messages above.');
  for (const f of ['dist/extension.js', 'dist/extensionCore.js', 'dist/webview.js', 'dist/wasm/tree-sitter-cpp.wasm', 'media/icon.png']) {
    if (!existsSync(f)) throw new Error(`${f} is missing after the build; the VSIX would not work.`);
  }
  const vsce = createRequire(import.meta.url).resolve('@vscode/vsce/vsce');
  const pack = () => spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--no-update-package-json',
    '--readme-path', 'docs/marketplace.md', '--no-rewrite-relative-links', '-o', target],
    { stdio: ['ignore', 'inherit', 'inherit'] });
  // A file written while it is zipped (a test run editing the tree) fails the pack; once more then reads it whole.
  const r = pack().status === 0 ? { status: 0 } : pack();
  if (r.status !== 0) throw new Error(`vsce package exited ${r.status}.`);
  return target;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    console.log(`packaged ${packageVsix(process.argv[2])}`);
  } catch (e) {
    console.error(`package: ${e.message}`);
    process.exit(1);
  }
}
