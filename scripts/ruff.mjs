// Ruff over the harness's Python (and the scripts'), through Astral's WebAssembly build of Ruff from npm: the
// test machines reach npm and Debian, not PyPI. The rules that catch real bugs (pyflakes: undefined names,
// unused imports and variables, redefinitions; a few bugbear ones) and a readable line length.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PositionEncoding, Workspace } from '@astral-sh/ruff-wasm-nodejs';

export const RUFF_SETTINGS = {
  'line-length': 140,
  'target-version': 'py39',
  lint: {
    select: ['F', 'E9', 'E711', 'E712', 'B006', 'B008', 'B015', 'B018', 'E501'],
  },
};
// pytest fixtures are imported and then named as parameters, which pyflakes reads as a redefinition
const TEST_SETTINGS = { ...RUFF_SETTINGS, lint: { ...RUFF_SETTINGS.lint, ignore: ['F811'] } };

function pythonFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === '__pycache__' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...pythonFiles(p));
    else if (name.endsWith('.py')) out.push(p);
  }
  return out;
}

const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['harness', 'scripts'];
const ruff = new Workspace(RUFF_SETTINGS, PositionEncoding.Utf16);
const ruffForTests = new Workspace(TEST_SETTINGS, PositionEncoding.Utf16);
let problems = 0;
let files = 0;
for (const root of roots) {
  for (const file of pythonFiles(root)) {
    files++;
    const checker = /(^|\/)tests\/(test_[^/]*|conftest)\.py$/.test(file) ? ruffForTests : ruff;
    for (const d of checker.check(readFileSync(file, 'utf8'))) {
      problems++;
      console.log(`${relative('.', file)}:${d.start_location.row}:${d.start_location.column}: ${d.code ?? 'syntax'} ${d.message}`);
    }
  }
}
console.log(`ruff ${Workspace.version()}: ${files} files, ${problems} problem${problems === 1 ? '' : 's'}`);
process.exit(problems ? 1 : 0);
