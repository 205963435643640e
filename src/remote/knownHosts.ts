// known_hosts as OpenSSH reads it: plain and hashed (|1|salt|hash) names, [host]:port, comma lists with
// wildcards and negations, and the @revoked marker. Used to decide whether a server's host key is trusted.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface KnownHostEntry {
  file: string;
  line: number;
  marker?: '@revoked' | '@cert-authority';
  /** The host field as written (may be hashed). */
  hosts: string;
  keyType: string;
  /** The key blob (base64-decoded). */
  key: Buffer;
}

export type HostKeyStatus =
  | { kind: 'trusted'; entry: KnownHostEntry }
  | { kind: 'revoked'; entry: KnownHostEntry }
  | { kind: 'mismatch'; expected: KnownHostEntry[] }
  | { kind: 'unknown' };

/** `SHA256:...` as `ssh-keygen -lf` and OpenSSH's prompts print it. */
export function fingerprint(key: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(key).digest('base64').replace(/=+$/, '');
}

/** The key type named inside an SSH public key blob (`ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`, ...). */
export function keyTypeOf(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const n = key.readUInt32BE(0);
  return key.subarray(4, 4 + n).toString('ascii');
}

/** The name OpenSSH looks up: `host`, or `[host]:port` when the port is not 22. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

export function parseKnownHosts(text: string, file = 'known_hosts'): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const fields = line.split(/\s+/);
    let marker: KnownHostEntry['marker'];
    if (fields[0] === '@revoked' || fields[0] === '@cert-authority') marker = fields.shift() as KnownHostEntry['marker'];
    else if (fields[0].startsWith('@')) return; // an unknown marker: OpenSSH skips the line
    if (fields.length < 3) return;
    const [hosts, keyType, b64] = fields;
    const key = Buffer.from(b64, 'base64');
    if (!key.length) return;
    entries.push({ file, line: i + 1, marker, hosts, keyType, key });
  });
  return entries;
}

function globToRegExp(pattern: string): RegExp {
  const re = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 'i');
}

function hashedMatches(field: string, name: string): boolean {
  const [, kind, salt, hash] = field.split('|');
  if (kind !== '1' || !salt || !hash) return false;
  const mac = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
  return mac === hash;
}

/** Does the host field of an entry match `name` (already in `[host]:port` form when the port is not 22)? */
export function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith('|')) return hashedMatches(field, name);
  let matched = false;
  for (const pattern of field.split(',')) {
    if (pattern.startsWith('!')) {
      if (globToRegExp(pattern.slice(1)).test(name)) return false;
    } else if (globToRegExp(pattern).test(name)) {
      matched = true;
    }
  }
  return matched;
}

/** The key types this name has entries for, so the client can ask the server for one of those first. */
export function knownKeyTypes(entries: KnownHostEntry[], names: string[]): string[] {
  const types: string[] = [];
  for (const e of entries) {
    if (e.marker) continue;
    if (names.some((n) => hostFieldMatches(e.hosts, n)) && !types.includes(e.keyType)) types.push(e.keyType);
  }
  return types;
}

/**
 * Decides on an offered key. A key of a type the name has no entry for, while the name has entries of
 * other types, counts as a mismatch: the client asked for the known types first, so a server that no
 * longer offers them is not the one we knew.
 */
export function checkHostKey(entries: KnownHostEntry[], names: string[], key: Buffer): HostKeyStatus {
  const mine = entries.filter((e) => e.marker !== '@cert-authority' && names.some((n) => hostFieldMatches(e.hosts, n)));
  const revoked = entries.find((e) => e.marker === '@revoked' && e.key.equals(key));
  if (revoked) return { kind: 'revoked', entry: revoked };
  const plain = mine.filter((e) => !e.marker);
  const same = plain.find((e) => e.key.equals(key));
  if (same) return { kind: 'trusted', entry: same };
  if (plain.length) return { kind: 'mismatch', expected: plain };
  return { kind: 'unknown' };
}

export async function readKnownHosts(files: string[]): Promise<KnownHostEntry[]> {
  const all: KnownHostEntry[] = [];
  for (const file of files) {
    try {
      all.push(...parseKnownHosts(await fs.readFile(file, 'utf8'), file));
    } catch {
      // a missing known_hosts file has no entries, as for OpenSSH
    }
  }
  return all;
}

/** Appends `name keytype base64` (hashed when asked, as with HashKnownHosts yes). */
export async function appendKnownHost(file: string, name: string, key: Buffer, hashed = false): Promise<void> {
  let host = name;
  if (hashed) {
    const salt = randomBytes(20);
    host = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
  }
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  let prefix = '';
  try {
    const existing = await fs.readFile(file, 'utf8');
    if (existing.length && !existing.endsWith('\n')) prefix = '\n';
  } catch {
    // a new file
  }
  await fs.appendFile(file, `${prefix}${host} ${keyTypeOf(key)} ${key.toString('base64')}\n`, { mode: 0o600 });
}
