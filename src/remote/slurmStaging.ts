// Puts what the workers read onto the shared filesystem: the harness and each spec's folder, each in a
// folder named by the hash of its content, so runs reuse what is there and a change is never half-seen.
import type { FileBundle } from './fileBundle';
import { harnessBundle, specBundle } from './fileBundle';
import type { LoginShell } from './slurmLoginShell';
import { shq } from './slurmLoginShell';

export type FileSet = Map<string, Buffer>;

// Unpacks {relative path: base64} from stdin into a temp folder, then renames it into place; a folder that
// is already there (another run staged the same content) wins.
export const UNPACK = `
import base64, json, os, shutil, sys
dest = sys.argv[1]
if os.path.exists(os.path.join(dest, ".complete")):
    sys.exit(0)
tmp = dest + ".tmp-%d" % os.getpid()
for rel, data in json.load(sys.stdin).items():
    p = os.path.join(tmp, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(base64.b64decode(data))
open(os.path.join(tmp, ".complete"), "w").close()
os.makedirs(os.path.dirname(dest), exist_ok=True)
try:
    os.rename(tmp, dest)
except OSError:
    shutil.rmtree(tmp, ignore_errors=True)
`;

export async function stageFiles(shell: LoginShell, python: string, dest: string, files: FileSet): Promise<void> {
  const check = await shell.exec(`test -f ${shq(`${dest}/.complete`)}`);
  if (check.code === 0) return;
  const payload = JSON.stringify(Object.fromEntries([...files.entries()].map(([k, v]) => [k, v.toString('base64')])));
  const r = await shell.exec(`${shq(python)} -S -c ${shq(UNPACK)} ${shq(dest)}`, { stdin: payload, timeoutS: 300 });
  if (r.code !== 0) {
    throw new Error(`Cannot copy files to ${dest} on ${shell.where} (exit ${r.code}): ${r.stderr.trim().slice(-600)}. ` +
      `Check that "workdir" is writable and that "python" runs there.`);
  }
}

/** The harness package as a content-named file set. */
export async function harnessFiles(harnessRoot: string): Promise<FileBundle> {
  return harnessBundle(harnessRoot);
}

export interface StagedSpec extends FileBundle {
  /** Paths inside the staged folder. */
  spec: string;
  baseline: string;
}

/** The spec, its baseline and the small files beside the spec, laid out as they are locally (as the SSH host does). */
export async function specFiles(specPath: string, baselinePath: string): Promise<StagedSpec> {
  const b = await specBundle(specPath, baselinePath);
  return { ...b, spec: b.specRel, baseline: b.sourceRel };
}
