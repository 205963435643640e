// `kernelevolve hosts [--config FILE] [--check]`: the configured hosts, and with --check what each one has.
import { parseArgs } from 'node:util';
import type { HostCheck } from '../contract/hardware';
import type { HostConfig } from '../remote/hostConfig';
import { createHosts, loadConfig } from '../remote/hostConfig';
import '../remote/hosts';
import { EXIT } from './cliError';
import { cliHostOptions } from './sshPrompts';

export const HOSTS_USAGE = `usage: kernelevolve hosts [--config FILE] [--check] [--host NAME ...] [--accept-new-host-key] [--json]`;

/** The columns of the --check table, in order; any other fact a host reports is listed under the table. */
const CHECK_COLUMNS = ['python', 'numpy', 'g++', 'nvcc', 'gpu', 'torch', 'triton'] as const;

export function formatTable(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n');
}

function where(h: HostConfig): string {
  if (h.type === 'local') return 'this machine';
  if (h.type === 'ssh') return `${h.user ? `${h.user}@` : ''}${h.host}${h.port ? `:${h.port}` : ''}`;
  return `${h.host ? `${h.user ? `${h.user}@` : ''}${h.host}` : 'this machine'}${h.partition ? ` partition ${h.partition}` : ''}`;
}

/** Shortens a compiler's `--version` first line to what tells versions apart. */
function short(fact: string | undefined): string {
  if (!fact) return '-';
  const m = /(\d+\.\d+(?:\.\d+)?)/.exec(fact);
  return fact.length > 24 && m ? m[1] : fact;
}

export function formatChecks(checks: HostCheck[]): string {
  const rows = [['host', 'reachable', ...CHECK_COLUMNS]];
  for (const c of checks) rows.push([c.host, c.reachable ? 'yes' : 'NO', ...CHECK_COLUMNS.map((k) => short(c.facts[k]))]);
  const lines = [formatTable(rows)];
  for (const c of checks) {
    const extra = Object.entries(c.facts).filter(([k]) => !(CHECK_COLUMNS as readonly string[]).includes(k));
    if (extra.length) lines.push(`${c.host}: ${extra.map(([k, v]) => `${k}=${v}`).join('  ')}`);
    if (c.error) lines.push(`${c.host}: ${c.error}`);
  }
  return lines.join('\n');
}

export async function hostsCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      check: { type: 'boolean', default: false },
      host: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      'accept-new-host-key': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const config = await loadConfig(values.config);
  const chosen = values.host?.length ? config.hosts.filter((h) => values.host!.includes(h.name)) : config.hosts;
  if (!values.check) {
    if (values.json) {
      process.stdout.write(JSON.stringify({ hosts: chosen }) + '\n');
      return EXIT.ok;
    }
    const rows = [['name', 'type', 'where', 'slots', 'devices', 'hardware']];
    for (const h of chosen) {
      const slots = h.type === 'slurm' ? `${h.maxJobs ?? 1} jobs` : String(h.slots ?? 1);
      const devices = 'devices' in h && h.devices?.length ? h.devices.join(',') : '-';
      rows.push([h.name, h.type, where(h), slots, devices, h.hardware ?? '-']);
    }
    process.stdout.write(formatTable(rows) + '\n');
    return EXIT.ok;
  }
  const hosts = createHosts(config, values.host ?? [], cliHostOptions({ acceptNewHostKey: values['accept-new-host-key'] }));
  let checks: HostCheck[];
  try {
    checks = await Promise.all(hosts.map((h) => h.check()));
  } finally {
    await Promise.all(hosts.map((h) => h.dispose().catch(() => undefined)));
  }
  if (values.json) process.stdout.write(JSON.stringify({ hosts: checks }) + '\n');
  else process.stdout.write(formatChecks(checks) + '\n');
  return checks.every((c) => c.reachable && !c.error) ? EXIT.ok : EXIT.hostFailure;
}
