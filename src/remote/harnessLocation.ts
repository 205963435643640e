// Where the Python harness lives in this installation (the repo, the npm package, or the VSIX).
import * as fs from 'node:fs';
import * as path from 'node:path';

export function harnessDir(): string {
  const candidates = [
    process.env.KERNELEVOLVE_HARNESS_DIR,
    path.join(__dirname, '..', 'harness'), // dist/*.js
    path.join(__dirname, '..', '..', 'harness'), // src/remote/*.ts under vitest
  ].filter((p): p is string => !!p);
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, 'kernelevolve_harness', '__main__.py'))) return path.resolve(dir);
  }
  throw new Error(`Cannot find the kernelevolve harness (looked in ${candidates.join(', ')}); reinstall KernelEvolve or set KERNELEVOLVE_HARNESS_DIR.`);
}
