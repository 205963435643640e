// Bundles the extension host, the CLI and the webview separately; type-checking is `npm run typecheck`.
import { build } from 'esbuild';

const watch = process.argv.includes('--watch');
const common = { bundle: true, sourcemap: true, logLevel: 'warning', minify: false };

const targets = [
  // Activation loads only the small extension.js; the rest (extensionCore.js) is required on first use.
  { ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js',
    platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'] },
  { ...common, entryPoints: ['src/extension/extensionCore.ts'], outfile: 'dist/extensionCore.js',
    platform: 'node', format: 'cjs', target: 'node20', external: ['vscode', 'cpu-features', './crypto/build/Release/sshcrypto.node'] },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js',
    platform: 'node', format: 'cjs', target: 'node20', external: ['cpu-features', './crypto/build/Release/sshcrypto.node'] },
  // the scripted OpenAI-compatible server as a program, for benchmark parts on machines without node_modules
  { ...common, entryPoints: ['test/support/scriptedLlmMain.ts'], outfile: 'dist/scripted-llm-server.js',
    platform: 'node', format: 'cjs', target: 'node20' },
  // the editor's spec drafting as a program, for the GPU part that runs drafted specs as they are
  { ...common, entryPoints: ['scripts/draftSpecMain.ts'], outfile: 'dist/draft-spec.js',
    platform: 'node', format: 'cjs', target: 'node20' },
  { ...common, entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js',
    platform: 'browser', format: 'iife', target: 'es2022' },
];

const { existsSync } = await import('node:fs');
await Promise.all(targets.filter((t) => existsSync(t.entryPoints[0])).map((t) => build(t)));
if (watch) console.error('watch mode is not supported; rerun npm run build');

// The extension finds kernels with tree-sitter: the runtime and the grammars travel next to the bundle.
const { mkdirSync, copyFileSync } = await import('node:fs');
mkdirSync('dist/wasm', { recursive: true });
copyFileSync('node_modules/web-tree-sitter/tree-sitter.wasm', 'dist/wasm/web-tree-sitter.wasm');
for (const g of ['python', 'cpp']) copyFileSync(`node_modules/@vscode/tree-sitter-wasm/wasm/tree-sitter-${g}.wasm`, `dist/wasm/tree-sitter-${g}.wasm`);
