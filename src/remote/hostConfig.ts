// The config (docs/remote.md) (`--config FILE`, and what the extension's settings hold): hosts and the LLM.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import { ConfigError, type LlmConfig } from '../contract/config';
import type { Toolchain } from '../contract/spec';
import type { Host } from './host';
import { LocalHost } from './localHost';

export interface LocalHostConfig {
  name: string;
  type: 'local';
  python?: string;
  slots?: number;
  devices?: number[];
  hardware?: string;
  workdir?: string;
  /** This machine's toolchain for custom-backend specs (over the spec's TOOLCHAIN, field by field). */
  toolchain?: Toolchain;
}

export interface SshHostConfig {
  name: string;
  type: 'ssh';
  /** Hostname or a ~/.ssh/config alias. */
  host: string;
  port?: number;
  user?: string;
  identityFile?: string;
  knownHostsFile?: string;
  python?: string;
  workdir?: string;
  slots?: number;
  devices?: number[];
  hardware?: string;
  /** That machine's toolchain for custom-backend specs (paths on that machine). */
  toolchain?: Toolchain;
}

export interface SlurmHostConfig {
  name: string;
  type: 'slurm';
  /** Login node (hostname or ssh alias); absent when running on the login node itself. */
  host?: string;
  port?: number;
  user?: string;
  identityFile?: string;
  knownHostsFile?: string;
  partition?: string;
  account?: string;
  gres?: string;
  timeLimit?: string;
  maxJobs?: number;
  sbatchOptions?: string[];
  /** Seconds an idle worker job keeps its GPU before it ends (default 300). */
  idleTimeoutS?: number;
  /** Shell lines run before every command on the login node and in each worker job, e.g. `module load slurm cuda`. */
  setup?: string;
  python?: string;
  workdir?: string;
  hardware?: string;
  /** The compute nodes' toolchain for custom-backend specs (paths on the nodes). */
  toolchain?: Toolchain;
}

export type HostConfig = LocalHostConfig | SshHostConfig | SlurmHostConfig;

export interface KernelEvolveConfig {
  hosts: HostConfig[];
  llm?: LlmConfig;
  knowledge?: string[];
  /** false: the tuner drafts from spread-out probes only, without the knowledge folders' starts (a benchmark
   *  whose grid those starts were learned from would otherwise start from its own answer). */
  tuneStarts?: boolean;
  /** false: the tuner proposes, and the run judges to the end, settings past a falling trend too (trend.ts); the
   *  throughput bench keeps its queue full with it, where the pruned softmax example's search ran out at 39 s. */
  tunePastTrend?: boolean;
}

/** What to say when a config names no host at all. */
export const NO_HOSTS = 'The config lists no hosts; add {"name": "local", "type": "local"} to "hosts".';

export const DEFAULT_CONFIG: KernelEvolveConfig = { hosts: [{ name: 'local', type: 'local' }] };

const TOOLCHAIN_EXAMPLE = '{"compile": ["my-cc", "{source}", "-o", "{output}"], "run": ["my-run", "--"]}';

/** A host's toolchain: commands as lists of strings, the rest strings. */
function toolchainProblems(value: unknown, at: string): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${at} must be an object like ${TOOLCHAIN_EXAMPLE}.`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (k === 'compile' || k === 'run') {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) out.push(`${at}.${k} must be a command as a list of strings, e.g. ${TOOLCHAIN_EXAMPLE}.`);
    } else if (k === 'hardware' || k === 'knowledge') {
      if (typeof v !== 'string') out.push(`${at}.${k} must be a string.`);
    } else {
      out.push(`${at}.${k} is not a toolchain field; use compile, run, knowledge or hardware.`);
    }
  }
  return out;
}

/** Checks a parsed config; every problem is one sentence naming the field and what to write. */
export function validateConfig(value: unknown, where = 'config'): KernelEvolveConfig {
  const problems: string[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${where}: expected a JSON object like {"hosts": [{"name": "local", "type": "local"}]}.`);
  }
  const v = value as Record<string, unknown>;
  const hosts = v.hosts ?? DEFAULT_CONFIG.hosts;
  if (!Array.isArray(hosts)) problems.push('"hosts" must be a list of host objects.');
  const names = new Set<string>();
  for (const [i, h] of (Array.isArray(hosts) ? hosts : []).entries()) {
    const at = `hosts[${i}]`;
    if (typeof h !== 'object' || h === null) {
      problems.push(`${at} must be an object with "name" and "type".`);
      continue;
    }
    const host = h as Record<string, unknown>;
    if (typeof host.name !== 'string' || !host.name) problems.push(`${at} needs a "name" (a string).`);
    else if (names.has(host.name)) problems.push(`${at}: the name "${host.name}" is used twice; host names must be unique.`);
    else names.add(host.name);
    if (!['local', 'ssh', 'slurm'].includes(host.type as string)) {
      problems.push(`${at}.type is ${JSON.stringify(host.type)}; use "local", "ssh" or "slurm".`);
    }
    if (host.type === 'ssh' && (typeof host.host !== 'string' || !host.host)) {
      problems.push(`${at} is an ssh host and needs "host" (a hostname or a ~/.ssh/config alias).`);
    } else if (host.host !== undefined && (typeof host.host !== 'string' || !host.host)) {
      problems.push(`${at}.host must be a hostname or a ~/.ssh/config alias; leave it out to use this machine.`);
    }
    if (host.sbatchOptions !== undefined && (!Array.isArray(host.sbatchOptions) || !host.sbatchOptions.every((o) => typeof o === 'string'))) {
      problems.push(`${at}.sbatchOptions must be a list of strings such as ["--qos=high"].`);
    }
    for (const k of ['port', 'slots', 'maxJobs', 'idleTimeoutS']) {
      if (host[k] !== undefined && (!Number.isInteger(host[k]) || (host[k] as number) < 1)) {
        problems.push(`${at}.${k} must be a positive integer.`);
      }
    }
    if (host.devices !== undefined && (!Array.isArray(host.devices) || !host.devices.every((d) => Number.isInteger(d) && d >= 0))) {
      problems.push(`${at}.devices must be a list of device ordinals such as [0, 1].`);
    }
    if (host.toolchain !== undefined) problems.push(...toolchainProblems(host.toolchain, `${at}.toolchain`));
    for (const k of ['user', 'identityFile', 'knownHostsFile', 'python', 'workdir', 'hardware', 'partition', 'account', 'gres', 'timeLimit', 'setup']) {
      if (host[k] !== undefined && typeof host[k] !== 'string') problems.push(`${at}.${k} must be a string.`);
    }
  }
  if (v.tuneStarts !== undefined && typeof v.tuneStarts !== 'boolean') problems.push('"tuneStarts" must be true or false.');
  if (v.tunePastTrend !== undefined && typeof v.tunePastTrend !== 'boolean') problems.push('"tunePastTrend" must be true or false.');
  if (v.llm !== undefined && (typeof v.llm !== 'object' || v.llm === null)) problems.push('"llm" must be an object like {"model": "...", "baseURL": "..."}.');
  if (problems.length) throw new ConfigError(`${where} has ${problems.length} problem(s):\n- ${problems.join('\n- ')}`);
  return { ...(v as object), hosts: hosts as HostConfig[] } as KernelEvolveConfig;
}

export async function loadConfig(file: string | undefined): Promise<KernelEvolveConfig> {
  if (!file) return DEFAULT_CONFIG;
  let text: string;
  try {
    text = await fs.readFile(expandHome(file), 'utf8');
  } catch {
    throw new ConfigError(`Cannot read the config file ${file}: check the path given to --config.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${file} is not valid JSON (${(e as Error).message}).`);
  }
  return validateConfig(parsed, file);
}

export function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? os.homedir() + p.slice(1) : p;
}

/** What a front end (CLI, extension) lends the hosts it creates: how to ask the user things. */
export interface HostOptions {
  /** An SSH server offered a key known_hosts lacks; resolve true to trust it (it is then recorded). */
  onUnknownHostKey?: (host: string, fingerprint: string) => Promise<boolean>;
  /** An identity file is encrypted; resolve its passphrase, or undefined to skip the key. */
  askPassphrase?: (keyFile: string) => Promise<string | undefined>;
  /** An ssh_config to read instead of ~/.ssh/config. */
  sshConfigFile?: string;
  /** The local host's warm-worker server ends with this process (the editor's extension host). */
  warmServerOwner?: number;
}

export type HostFactory = (config: HostConfig, options?: HostOptions) => Host;
const factories = new Map<HostConfig['type'], HostFactory>([
  ['local', (c, o) => new LocalHost({ ...(c as LocalHostConfig), warmServerOwner: o?.warmServerOwner })],
]);

/** Lets src/remote's other host kinds plug in without this file importing ssh2. */
export function registerHostType(type: HostConfig['type'], factory: HostFactory): void {
  factories.set(type, factory);
}

/** Builds the hosts named (all hosts of the config when none are named). */
export function createHosts(config: KernelEvolveConfig, names: string[] = [], options: HostOptions = {}): Host[] {
  const chosen = names.length ? names.map((n) => {
    const h = config.hosts.find((x) => x.name === n);
    if (!h) {
      throw new ConfigError(`No host named "${n}" in the config; known hosts: ${config.hosts.map((x) => x.name).join(', ') || 'none'}.`);
    }
    return h;
  }) : config.hosts;
  return chosen.map((h) => {
    const make = factories.get(h.type);
    if (!make) throw new ConfigError(`Host "${h.name}" has type "${h.type}", which this build cannot use yet.`);
    return make(h, options);
  });
}
