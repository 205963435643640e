// What is sent to an SSH host once per version: the harness bundle and spec bundles, named by content.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { harnessBundle, specBundle } from '../../src/remote/fileBundle';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-bundle-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(rel: string, text: string | Buffer): string {
  const p = path.join(dir, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  return p;
}

describe('spec bundle', () => {
  it('holds the spec, its SOURCE and small files beside it, and changes name when any of them changes', async () => {
    const spec = write('k/spec.py', 'SOURCE = "k.cpp"\n');
    const source = write('k/k.cpp', 'int k;\n');
    write('k/common.h', '#define N 4\n');
    write('k/big.bin', Buffer.alloc(300 * 1024));
    write('k/.hidden', 'x');
    write('k/sub/deep.h', 'x');
    const a = await specBundle(spec, source);
    expect([...a.files.keys()].sort()).toEqual(['common.h', 'k.cpp', 'spec.py']);
    expect(a.specRel).toBe('spec.py');
    expect((await specBundle(spec, source)).hash).toBe(a.hash);

    await new Promise((r) => setTimeout(r, 20));
    write('k/common.h', '#define N 8\n');
    const b = await specBundle(spec, source);
    expect(b.hash).not.toBe(a.hash);
    expect(b.files.get('common.h')!.toString()).toBe('#define N 8\n');

    write('k/extra.py', 'X = 1\n');
    const c = await specBundle(spec, source);
    expect(c.files.has('extra.py')).toBe(true);
    expect(c.hash).not.toBe(b.hash);
  });

  it('keeps the layout when SOURCE lies outside the spec folder', async () => {
    const spec = write('specs/s/spec.py', 'SOURCE = "../../src/k.cpp"\n');
    const source = write('src/k.cpp', 'int k;\n');
    const bundle = await specBundle(spec, source);
    expect(bundle.specRel).toBe('specs/s/spec.py');
    expect(bundle.sourceRel).toBe('src/k.cpp');
    expect(path.posix.normalize(path.posix.join(path.posix.dirname(bundle.specRel), '../../src/k.cpp'))).toBe(bundle.sourceRel);
  });
});

describe('harness bundle', () => {
  it('holds the package (no caches), the host agent among its modules, and changes hash with any file', async () => {
    write('harness/kernelevolve_harness/__main__.py', 'parser.add_argument("--lock")\n');
    write('harness/kernelevolve_harness/host_agent.py', 'agent = 1\n');
    write('harness/kernelevolve_harness/backends/cpp.py', 'x = 1\n');
    write('harness/kernelevolve_harness/__pycache__/x.cpython-311.pyc', 'junk');
    const b = await harnessBundle(path.join(dir, 'harness'));
    expect([...b.files.keys()].sort()).toEqual(['kernelevolve_harness/__main__.py', 'kernelevolve_harness/backends/cpp.py', 'kernelevolve_harness/host_agent.py']);
    write('harness/kernelevolve_harness/__main__.py', 'parser.add_argument("--json")\n');
    const older = await harnessBundle(path.join(dir, 'harness'));
    expect(older.hash).not.toBe(b.hash);
  });
});
