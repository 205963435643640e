import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../../src/engine/sourceDiff';

function gnuDiff(a: string, b: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-diff-'));
  fs.writeFileSync(path.join(dir, 'a'), a);
  fs.writeFileSync(path.join(dir, 'b'), b);
  const r = spawnSync('diff', ['-u', '--label', 'a', '--label', 'b', 'a', 'b'], { cwd: dir, encoding: 'utf8' });
  fs.rmSync(dir, { recursive: true, force: true });
  return r.stdout;
}

describe('unifiedDiff', () => {
  it('matches diff -u on the hunks of a typical tuning change and a rewrite', () => {
    const base = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const tuned = base.replace('line 3\n', 'line 3 changed\n').replace('line 30\n', '').replace('line 35\n', 'line 35\nadded\n');
    expect(unifiedDiff(base, tuned)).toBe(gnuDiff(base, tuned));
    const rewrite = 'int main() {\n  return 0;\n}\n';
    const other = 'int main() {\n  int x = 1;\n  return x - 1;\n}\n';
    expect(unifiedDiff(rewrite, other)).toBe(gnuDiff(rewrite, other));
  });

  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\n', 'a\n')).toBe('');
  });
});
