// `npm run bench:dispatch [-- --candidates N]`: what dispatching a candidate over SSH costs beyond the
// harness's own time. Starts a real sshd on 127.0.0.1 (as the tests do), evaluates N candidates of a small
// C++ spec one after another over one reused connection, and prints per-candidate
//   overhead = (wall time of SshHost.evaluate, client side) - (lifetime of the harness process on the host).
// The first candidate (connect, harness upload) is reported on its own. Goal: overhead under 50 ms.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const candidates = Number(arg('candidates', '30'));

const entry = `
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSpec } from './src/engine/spec';
import { LocalHost } from './src/remote/localHost';
import { SshHost } from './src/remote/sshHost';
import { startSshd } from './test/support/sshd';

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, median: q(0.5), p95: q(0.95), min: s[0], max: s[s.length - 1] };
};
const fmt = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => k + ' ' + v.toFixed(1)).join('  ');

export async function bench(n: number): Promise<void> {
  const fixtures = path.join(${JSON.stringify(root)}, 'test/integration/sshFixtures');
  const spec = await loadSpec(path.join(fixtures, 'spec.py'));
  const source = fs.readFileSync(path.join(fixtures, 'scale.cpp'), 'utf8');
  const sshd = await startSshd();
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-bench-work-'));
  const host = new SshHost({ name: 'loopback', type: 'ssh', host: '127.0.0.1', port: sshd.port, user: sshd.user,
    identityFile: sshd.userKey, knownHostsFile: sshd.knownHosts, workdir, slots: 1 }, { sshConfigFile: path.join(sshd.dir, 'none') });
  const local = new LocalHost({ python: sshd.python });
  const job = (i: number) => ({ id: 'bench-' + i, specPath: spec.specPath, baselinePath: spec.sourcePath,
    // a distinct candidate each time (a comment), as a search sends
    candidateSource: source + '\\n// candidate ' + i + '\\n', candidateFileName: 'scale.cpp' });
  try {
    const t0 = performance.now();
    const first = await host.evaluate(job(0));
    const firstWall = performance.now() - t0;
    const overheads: number[] = [];
    const walls: number[] = [];
    const harness: number[] = [];
    for (let i = 1; i <= n; i++) {
      const t = performance.now();
      const v = await host.evaluate(job(i));
      const wall = performance.now() - t;
      if (v.status !== 'ok') throw new Error('candidate ' + i + ' was judged ' + v.status + ': ' + v.reason);
      walls.push(wall);
      harness.push(v.harness_ms as number);
      overheads.push(wall - (v.harness_ms as number));
    }
    const localWalls: number[] = [];
    for (let i = 1; i <= Math.min(n, 10); i++) {
      const t = performance.now();
      await local.evaluate(job(1000 + i));
      localWalls.push(performance.now() - t);
    }
    const logins = (sshd.log().match(/Accepted publickey/g) ?? []).length;
    console.log('dispatch over SSH (sshd on 127.0.0.1:' + sshd.port + '), ' + n + ' candidates in a row, slots 1, ' + logins + ' SSH login(s) in all');
    console.log('first candidate (connect + harness upload + run): ' + firstWall.toFixed(0) + ' ms (status ' + first.status + ')');
    console.log('wall per candidate via SSH, ms:     ' + fmt(stats(walls)));
    console.log('harness process on the host, ms:    ' + fmt(stats(harness)));
    console.log('dispatch overhead per candidate, ms: ' + fmt(stats(overheads)));
    console.log('for comparison, LocalHost wall, ms:  ' + fmt(stats(localWalls)) + '  (' + localWalls.length + ' candidates)');
    const med = stats(overheads).median;
    console.log('goal < 50 ms overhead: ' + (med < 50 ? 'met' : 'NOT met') + ' (median ' + med.toFixed(1) + ' ms, p95 ' + stats(overheads).p95.toFixed(1) + ' ms)');
  } finally {
    await host.dispose();
    await sshd.stop();
    fs.rmSync(workdir, { recursive: true, force: true });
  }
}
`;

const dir = mkdtempSync(join(tmpdir(), 'ke-bench-'));
const outfile = join(dir, 'bench.cjs');
await build({
  stdin: { contents: entry, resolveDir: root, loader: 'ts', sourcefile: 'bench-dispatch-entry.ts' },
  outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'error',
  external: ['cpu-features', './crypto/build/Release/sshcrypto.node'],
});
process.env.KERNELEVOLVE_HARNESS_DIR ??= join(root, 'harness');
const mod = await import(pathToFileURL(outfile).href);
try {
  await (mod.bench ?? mod.default.bench)(candidates);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
