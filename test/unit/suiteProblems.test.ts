// The problems a suite finds under its folder: level by level in KernelBench's numbering, and through links to
// files (a folder of links picks a shard of a level), never through links to folders.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findProblems } from '../../src/cli/suiteProblems';

const ROOT = path.resolve(__dirname, '../..');
const RELU = path.join(ROOT, 'examples/kernelbench/cpu/relu_scale.py');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('findProblems', () => {
  it('follows links to problem files, in KernelBench\'s numbering, and skips dangling links and links to folders', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-problems-'));
    dirs.push(dir);
    fs.mkdirSync(path.join(dir, 'level1'));
    fs.symlinkSync(RELU, path.join(dir, 'level1', '10_relu.py'));
    fs.copyFileSync(RELU, path.join(dir, 'level1', '2_relu.py'));
    fs.symlinkSync('/nonexistent/problem.py', path.join(dir, 'level1', '3_gone.py'));
    fs.symlinkSync(path.join(dir, 'level1'), path.join(dir, 'level9'));
    expect(findProblems(dir).map((p) => p.name)).toEqual(['level1/2_relu', 'level1/10_relu']);
  });
});
