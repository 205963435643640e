// The pieces of "Add GPU Host" that need no editor: what the user typed (`user@gpu-box:2222`, or a whole
// `ssh -p 2222 user@gpu-box` command, as Remote-SSH accepts) as a host entry of kernelEvolve.hosts.
import type { SshHostConfig } from '../remote/hostConfig';

export interface SshDestination {
  host: string;
  user?: string;
  port?: number;
  identityFile?: string;
}

/** Parses `user@host[:port]` or `ssh [-p PORT] [-i KEY] [-l USER] user@host`; undefined when it names no host. */
export function parseSshDestination(input: string): SshDestination | undefined {
  const words = input.trim().split(/\s+/).filter(Boolean);
  if (words[0] === 'ssh') words.shift();
  const out: Partial<SshDestination> = {};
  let target: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === '-p') out.port = Number(words[++i]);
    else if (w === '-i') out.identityFile = words[++i];
    else if (w === '-l') out.user = words[++i];
    else if (w.startsWith('-')) { if (/^-[oJFLRD]$/.test(w)) i++; }
    else target ??= w;
  }
  if (!target) return undefined;
  const m = /^(?:([^@\s]+)@)?([A-Za-z0-9._-]+|\[[0-9a-fA-F:]+\])(?::(\d+))?$/.exec(target);
  if (!m) return undefined;
  const port = out.port ?? (m[3] ? Number(m[3]) : undefined);
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) return undefined;
  return { host: m[2].replace(/^\[|\]$/g, ''), user: out.user ?? m[1], ...(port ? { port } : {}), ...(out.identityFile ? { identityFile: out.identityFile } : {}) };
}

/** A host name for the setting that no other entry has (`gpu-box`, `gpu-box-2`). */
export function uniqueHostName(base: string, taken: readonly string[]): string {
  const clean = base.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'gpu';
  let name = clean;
  for (let i = 2; taken.includes(name); i++) name = `${clean}-${i}`;
  return name;
}

export function sshHostEntry(name: string, d: SshDestination): SshHostConfig {
  return { name, type: 'ssh', host: d.host, ...(d.user ? { user: d.user } : {}), ...(d.port ? { port: d.port } : {}), ...(d.identityFile ? { identityFile: d.identityFile } : {}) } as SshHostConfig;
}
