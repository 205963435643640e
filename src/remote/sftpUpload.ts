// Puts a file bundle into a folder on the host over SFTP: written to a temporary sibling and renamed into
// place, so a folder that exists is always complete, even when two clients upload at once. A server without
// an SFTP subsystem gets the same bundle over the exec channel instead (unpacked by the host's Python).
import { randomBytes } from 'node:crypto';
import type { SFTPWrapper } from 'ssh2';
import type { FileBundle } from './fileBundle';
import { HostUnavailableError } from './host';
import type { SshConnection } from './sshConnection';
import { SftpUnavailableError } from './sshConnection';
import { shq } from './slurmLoginShell';
import { UNPACK } from './slurmStaging';

/** The bundle as base64 JSON on the stdin of `python -c UNPACK dest`: one command, renamed into place at the end. */
async function uploadOverExec(conn: SshConnection, bundle: FileBundle, dest: string, python: string): Promise<void> {
  const payload = JSON.stringify(Object.fromEntries([...bundle.files.entries()].map(([k, v]) => [k, v.toString('base64')])));
  const r = await conn.run(`${python} -S -c ${shq(UNPACK)} ${shq(dest)}`, payload, 300_000);
  if (r.code !== 0) {
    throw new HostUnavailableError(conn.options.name, `Cannot copy files to ${dest} on ${conn.options.name} without SFTP (exit ${r.code}): ` +
      `${r.stderr.trim().slice(-600)}. Check that "workdir" is writable and that "python" runs there.`);
  }
}

function call<T>(name: string, host: string, fn: (cb: (err: Error | null | undefined, v?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, v) => {
    if (err) reject(new HostUnavailableError(host, `SFTP ${name} failed on ${host}: ${err.message}`));
    else resolve(v as T);
  }));
}

export async function uploadBundle(conn: SshConnection, bundle: FileBundle, dest: string, python = 'python3'): Promise<void> {
  const host = conn.options.name;
  let sftp: SFTPWrapper;
  try {
    sftp = await conn.sftp();
  } catch (e) {
    if (e instanceof SftpUnavailableError) return uploadOverExec(conn, bundle, dest, python);
    throw e;
  }
  const tmp = `${dest}.partial-${randomBytes(4).toString('hex')}`;
  const dirs = new Set<string>([tmp]);
  for (const name of bundle.files.keys()) {
    const parts = name.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(`${tmp}/${parts.slice(0, i).join('/')}`);
  }
  for (const dir of [...dirs].sort((a, b) => a.length - b.length)) {
    await call(`mkdir ${dir}`, host, (cb) => sftp.mkdir(dir, cb));
  }
  await Promise.all([...bundle.files.entries()].map(([name, content]) =>
    call(`write ${name}`, host, (cb) => sftp.writeFile(`${tmp}/${name}`, content, cb))));
  try {
    await call(`rename to ${dest}`, host, (cb) => sftp.rename(tmp, dest, cb));
  } catch (e) {
    // Another client won the race: its copy has the same content. Ours goes.
    const r = await conn.run(`test -d '${dest}' && rm -rf '${tmp}' && echo ok`);
    if (r.stdout.trim() !== 'ok') throw e;
  }
}
