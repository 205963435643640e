// ~/.ssh/config as OpenSSH reads it for one destination: Host/Match blocks (first value wins), Include,
// HostName/User/Port/IdentityFile with %-tokens, ProxyJump chains, known_hosts files. Built on ssh-config.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import SSHConfig from 'ssh-config';

/** Where and how to reach one machine, after ~/.ssh/config and the host's own settings. */
export interface SshTarget {
  /** What the user wrote (an alias or a hostname). */
  alias: string;
  hostName: string;
  port: number;
  user: string;
  /** Private key files to offer, in order (only those that exist are tried). */
  identityFiles: string[];
  /** Offer only the identity files, not every key of the agent. */
  identitiesOnly: boolean;
  /** ssh-agent socket; undefined when there is none or `IdentityAgent none`. */
  agent?: string;
  /** Machines to hop through, first one reached directly (`ProxyJump`). */
  jumps: SshTarget[];
  /** A command whose stdin/stdout carry the connection (`ProxyCommand`), tokens expanded. */
  proxyCommand?: string;
  /** The names looked up in known_hosts (`[host]:port` form applied later). */
  hostKeyAlias?: string;
  knownHostsFiles: string[];
  /** Write new known_hosts entries hashed (`HashKnownHosts yes`). */
  hashKnownHosts: boolean;
  connectTimeoutS?: number;
  serverAliveIntervalS?: number;
  serverAliveCountMax?: number;
}

export interface SshTargetOverrides {
  port?: number;
  user?: string;
  identityFile?: string;
  knownHostsFile?: string;
}

export class SshConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SshConfigError';
  }
}

export function defaultSshConfigFile(): string {
  return path.join(os.homedir(), '.ssh', 'config');
}

function expandTilde(p: string): string {
  return p === '~' || p.startsWith('~/') ? os.homedir() + p.slice(1) : p;
}

/** Expands ssh_config's %-tokens (the ones that make sense before connecting) and a leading ~. */
function expandTokens(value: string, t: { host: string; originalHost: string; port: number; user: string }): string {
  const local = os.userInfo().username;
  return expandTilde(value).replace(/%([%dhnprulL])/g, (_m, c: string) => {
    switch (c) {
      case '%': return '%';
      case 'd': return os.homedir();
      case 'h': return t.host;
      case 'n': return t.originalHost;
      case 'p': return String(t.port);
      case 'r': return t.user;
      case 'u': return local;
      case 'l': return os.hostname();
      case 'L': return os.hostname().split('.')[0];
      default: return _m;
    }
  });
}

function patternToRegExp(p: string): RegExp {
  return new RegExp('^' + p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
}

/** Files an `Include` pattern names (relative ones are under `base`), sorted as glob(3) sorts them. */
async function globFiles(pattern: string, base: string): Promise<string[]> {
  let abs = expandTilde(pattern);
  if (!path.isAbsolute(abs)) abs = path.join(base, abs);
  const parts = abs.split('/').filter(Boolean);
  let found = ['/'];
  for (const part of parts) {
    const next: string[] = [];
    for (const base of found) {
      if (!/[*?]/.test(part)) {
        next.push(path.join(base, part));
        continue;
      }
      const re = patternToRegExp(part);
      let names: string[] = [];
      try {
        names = await fs.readdir(base);
      } catch {
        continue;
      }
      for (const n of names.sort()) if (!n.startsWith('.') && re.test(n)) next.push(path.join(base, n));
    }
    found = next;
  }
  const files: string[] = [];
  for (const f of found) {
    try {
      if ((await fs.stat(f)).isFile()) files.push(f);
    } catch {
      // OpenSSH ignores Include patterns that match nothing
    }
  }
  return files;
}

type Line = SSHConfig[number];

function directiveValue(line: Line): string[] {
  const v = (line as { value: unknown }).value;
  if (Array.isArray(v)) return v.map((x: { val: string }) => x.val);
  return typeof v === 'string' ? v.split(/\s+/).filter(Boolean) : [];
}

function isDirective(line: Line, name: string): boolean {
  return line.type === SSHConfig.DIRECTIVE && (line as { param: string }).param.toLowerCase() === name;
}

/**
 * Reads a config with its Includes spliced in. An Include inside a Host block brings the included file's
 * plain directives into that block and its own blocks after it (OpenSSH scopes them the same way in
 * practice: included blocks carry their own Host lines).
 */
async function readConfig(file: string, includeBase: string, depth = 0): Promise<SSHConfig> {
  if (depth > 16) throw new SshConfigError(`${file}: Include nests more than 16 levels; look for an Include loop.`);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return SSHConfig.parse('');
  }
  let parsed: SSHConfig;
  try {
    parsed = SSHConfig.parse(text);
  } catch (e) {
    throw new SshConfigError(`Cannot parse ${file}: ${(e as Error).message}. Check it with \`ssh -G HOST\`.`);
  }
  const out = SSHConfig.parse('');
  const spliceInto = async (lines: Line[], into: Line[], after: Line[]) => {
    for (const line of lines) {
      if (isDirective(line, 'include')) {
        for (const pattern of directiveValue(line)) {
          for (const inc of await globFiles(pattern, includeBase)) {
            const sub = await readConfig(inc, includeBase, depth + 1);
            for (const l of sub) (('config' in l) ? after : into).push(l);
          }
        }
      } else {
        into.push(line);
      }
    }
  };
  for (const line of parsed) {
    if ('config' in line && line.config) {
      const inner: Line[] = [];
      const trailing: Line[] = [];
      await spliceInto([...line.config], inner, trailing);
      line.config.length = 0;
      line.config.push(...inner);
      out.push(line, ...trailing);
    } else {
      const trailing: Line[] = [];
      await spliceInto([line], out as unknown as Line[], trailing);
      out.push(...trailing);
    }
  }
  return out;
}

export const SYSTEM_SSH_CONFIG = '/etc/ssh/ssh_config';

/**
 * The user's config, then the system's (first value wins across both), as `ssh` reads them; a config file
 * named explicitly is read alone, as with `ssh -F`.
 */
async function readConfigs(explicit?: string): Promise<SSHConfig> {
  if (explicit) return readConfig(explicit, path.join(os.homedir(), '.ssh'));
  const user = await readConfig(defaultSshConfigFile(), path.join(os.homedir(), '.ssh'));
  const system = await readConfig(SYSTEM_SSH_CONFIG, path.dirname(SYSTEM_SSH_CONFIG));
  // Parsed blocks keep their own lines, so the system file's top-level lines stay global after joining.
  const joined = SSHConfig.parse('');
  joined.push(...user, ...system);
  return joined;
}

function first(computed: Record<string, string | string[]>, key: string): string | undefined {
  const v = computed[key];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(' ') : v;
}

function yes(v: string | undefined): boolean {
  return v !== undefined && /^(yes|true)$/i.test(v.trim());
}

function positiveInt(v: string | undefined, what: string, alias: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new SshConfigError(`~/.ssh/config gives ${what} "${v}" for ${alias}; it must be a number.`);
  return n;
}

/** Splits `ProxyJump a,user@b:2222,ssh://c` into hops. */
export function parseProxyJump(value: string): { host: string; user?: string; port?: number }[] {
  return value.split(',').map((raw) => raw.trim()).filter(Boolean).map((raw) => {
    let s = raw.replace(/^ssh:\/\//, '');
    let user: string | undefined;
    const at = s.lastIndexOf('@');
    if (at >= 0) {
      user = s.slice(0, at);
      s = s.slice(at + 1);
    }
    let port: number | undefined;
    const m = /^\[(.+)\](?::(\d+))?$/.exec(s) ?? /^([^:]+)(?::(\d+))?$/.exec(s);
    if (!m) throw new SshConfigError(`Cannot read the ProxyJump hop "${raw}"; write it as [user@]host[:port].`);
    if (m[2]) port = Number(m[2]);
    return { host: m[1], user, port };
  });
}

/**
 * Resolves a destination the way `ssh DEST` would: the host's own settings win (as options on ssh's
 * command line do), then the first value ~/.ssh/config gives.
 */
export async function resolveSshTarget(
  alias: string,
  overrides: SshTargetOverrides = {},
  configFile?: string,
  depth = 0,
): Promise<SshTarget> {
  if (depth > 8) throw new SshConfigError(`ProxyJump for ${alias} goes through more than 8 hops; look for a loop in ~/.ssh/config.`);
  const config = await readConfigs(configFile);
  const computed = config.compute(alias, { ignoreCase: true, matchExec: false }) as Record<string, string | string[]>;
  const rawHostName = first(computed, 'hostname') ?? alias;
  const hostName = rawHostName.replace(/%h/g, alias).replace(/%%/g, '%');
  const port = overrides.port ?? positiveInt(first(computed, 'port'), 'Port', alias) ?? 22;
  const user = overrides.user ?? first(computed, 'user') ?? os.userInfo().username;
  const tokens = { host: hostName, originalHost: alias, port, user };

  const configured = ((computed.identityfile as string[] | undefined) ?? []).filter((f) => f.toLowerCase() !== 'none');
  let identityFiles = [...(overrides.identityFile ? [overrides.identityFile] : []), ...configured].map((f) => expandTokens(f, tokens));
  if (!identityFiles.length) {
    identityFiles = ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((n) => path.join(os.homedir(), '.ssh', n));
  }
  identityFiles = [...new Set(identityFiles)];

  const agentSetting = first(computed, 'identityagent');
  let agent: string | undefined = process.env.SSH_AUTH_SOCK || undefined;
  if (agentSetting) {
    if (agentSetting.toLowerCase() === 'none') agent = undefined;
    else if (agentSetting !== 'SSH_AUTH_SOCK') {
      agent = agentSetting.startsWith('$') ? process.env[agentSetting.slice(1)] : expandTokens(agentSetting, tokens);
    }
  }

  const userKnown = overrides.knownHostsFile
    ? [overrides.knownHostsFile]
    : (first(computed, 'userknownhostsfile')?.split(/\s+/) ?? ['~/.ssh/known_hosts', '~/.ssh/known_hosts2']);
  const globalKnown = first(computed, 'globalknownhostsfile')?.split(/\s+/) ?? ['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2'];
  const knownHostsFiles = [...userKnown, ...globalKnown].filter((f) => f.toLowerCase() !== 'none').map((f) => expandTokens(f, tokens));

  const jumps: SshTarget[] = [];
  const proxyJump = first(computed, 'proxyjump');
  const proxyCommandRaw = first(computed, 'proxycommand');
  let proxyCommand: string | undefined;
  if (proxyJump && proxyJump.toLowerCase() !== 'none') {
    const hops = parseProxyJump(proxyJump);
    for (const [i, hop] of hops.entries()) {
      const t = await resolveSshTarget(hop.host, { user: hop.user, port: hop.port }, configFile, depth + 1);
      // Only the first hop keeps its own jumps; later hops are reached through the previous one.
      if (i > 0) t.jumps = [];
      if (i === 0) jumps.push(...t.jumps);
      t.jumps = [];
      jumps.push(t);
    }
  } else if (proxyCommandRaw && proxyCommandRaw.toLowerCase() !== 'none') {
    proxyCommand = expandTokens(proxyCommandRaw, tokens);
  }

  const aliveInterval = positiveInt(first(computed, 'serveraliveinterval'), 'ServerAliveInterval', alias);
  return {
    alias,
    hostName,
    port,
    user,
    identityFiles,
    identitiesOnly: yes(first(computed, 'identitiesonly')),
    agent,
    jumps,
    proxyCommand,
    hostKeyAlias: first(computed, 'hostkeyalias'),
    knownHostsFiles,
    hashKnownHosts: yes(first(computed, 'hashknownhosts')),
    connectTimeoutS: positiveInt(first(computed, 'connecttimeout'), 'ConnectTimeout', alias),
    serverAliveIntervalS: aliveInterval,
    serverAliveCountMax: positiveInt(first(computed, 'serveralivecountmax'), 'ServerAliveCountMax', alias),
  };
}

/** The Host aliases the user's ~/.ssh/config names (Includes followed; patterns with wildcards or `!` left out),
 *  each with its HostName and User when the block gives them: what "Add GPU Host" offers to pick from. */
export async function listSshConfigHosts(file = defaultSshConfigFile()): Promise<{ alias: string; hostName?: string; user?: string }[]> {
  const config = await readConfig(file, path.dirname(file));
  const out: { alias: string; hostName?: string; user?: string }[] = [];
  for (const line of config) {
    if (!('config' in line) || !isDirective(line, 'host')) continue;
    for (const alias of directiveValue(line)) {
      if (/[*?!]/.test(alias) || out.some((o) => o.alias === alias)) continue;
      const inner = [...line.config];
      const get = (key: string) => { const l = inner.find((x) => isDirective(x, key)); return l ? directiveValue(l)[0] : undefined; };
      out.push({ alias, hostName: get('hostname'), user: get('user') });
    }
  }
  return out;
}
