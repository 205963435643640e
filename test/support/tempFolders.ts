// Folders a test file writes into (specs, runs, bundles), removed when the file is done: a run of the suites leaves
// nothing in the system's temporary folder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll } from 'vitest';

const folders: string[] = [];
afterAll(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new folder in the system's temporary folder, named `<prefix>XXXXXX`. */
export function tempFolder(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
}
