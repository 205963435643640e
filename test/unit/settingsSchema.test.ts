// The editor checks `kernelEvolve.hosts` in User settings against the schema in package.json (a squiggle and its
// message as the user types); the run checks it with validateConfig. The two must agree: a host the schema lets
// through and the validator refuses is an error the user only meets when a run starts, and the other way round a
// squiggle under a host that works. Every host below is judged by both (ajv, the JSON-schema validator, plays the
// editor's part); the one rule a schema cannot say, that host names are unique, is the validator's alone.
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import * as pkg from '../../package.json';
import { validateConfig } from '../../src/remote/hostConfig';

type Property = { type?: string; properties?: Record<string, unknown>; items?: Property; required?: string[] };
const sections = ([] as Array<{ properties: Record<string, Property> }>).concat(pkg.contributes.configuration as never);
const hostsSchema = sections.map((s) => s.properties['kernelEvolve.hosts']).find(Boolean)!;
const validateSetting = new Ajv({ strict: false, allErrors: true }).compile(hostsSchema);

const HOSTS: Array<[string, Record<string, unknown>]> = [
  ['a local host', { name: 'local', type: 'local' }],
  ['an ssh host by alias', { name: 'h200', type: 'ssh', host: 'gpu-box', slots: 2, devices: [0, 1], hardware: 'nvidia-h200' }],
  ['an ssh host with a port, user, key and known_hosts', { name: 'b', type: 'ssh', host: '10.0.0.2', port: 2222, user: 'me', identityFile: '~/.ssh/id', knownHostsFile: '/k', python: 'python3', workdir: '/tmp/ke' }],
  ['a slurm host', { name: 's', type: 'slurm', host: 'login', partition: 'gpu', account: 'a', gres: 'gpu:1', timeLimit: '01:00:00', maxJobs: 4, sbatchOptions: ['--qos=high'], idleTimeoutS: 300, setup: 'module load cuda' }],
  ['a slurm host on its login node (no "host")', { name: 's', type: 'slurm' }],
  ['a host with a custom toolchain', { name: 'acc', type: 'local', toolchain: { compile: ['my-cc', '{source}', '-o', '{output}'], run: ['my-run', '--'], knowledge: '/k', hardware: 'acc-v2' } }],
  ['an ssh host without "host"', { name: 'x', type: 'ssh' }],
  ['an ssh host with an empty "host"', { name: 'x', type: 'ssh', host: '' }],
  ['a host without a name', { type: 'local' }],
  ['a host with an empty name', { name: '', type: 'local' }],
  ['a host without a type', { name: 'x' }],
  ['a host of an unknown type', { name: 'x', type: 'hip' }],
  ['port 0', { name: 'x', type: 'ssh', host: 'h', port: 0 }],
  ['a port given as text', { name: 'x', type: 'ssh', host: 'h', port: '22' }],
  ['half a slot', { name: 'x', type: 'local', slots: 1.5 }],
  ['no slots', { name: 'x', type: 'local', slots: 0 }],
  ['a negative device', { name: 'x', type: 'local', devices: [-1] }],
  ['a device list given as a number', { name: 'x', type: 'local', devices: 0 }],
  ['maxJobs 0', { name: 's', type: 'slurm', maxJobs: 0 }],
  ['idleTimeoutS 0', { name: 's', type: 'slurm', idleTimeoutS: 0 }],
  ['hardware given as a number', { name: 'x', type: 'local', hardware: 100 }],
  ['a slurm login node given as a number', { name: 's', type: 'slurm', host: 7 }],
  ['sbatch options given as one string', { name: 's', type: 'slurm', sbatchOptions: '--qos=high' }],
  ['setup given as a list', { name: 's', type: 'slurm', setup: ['module load cuda'] }],
  ['a toolchain compile command given as one string', { name: 'x', type: 'local', toolchain: { compile: 'my-cc {source}' } }],
  ['a toolchain with an unknown field', { name: 'x', type: 'local', toolchain: { link: ['ld'] } }],
  ['a toolchain given as a list', { name: 'x', type: 'local', toolchain: ['my-cc'] }],
];

function validatorAccepts(host: Record<string, unknown>): boolean {
  try {
    validateConfig({ hosts: [host] });
    return true;
  } catch {
    return false;
  }
}

describe('the settings schema of kernelEvolve.hosts', () => {
  it.each(HOSTS)('agrees with the run\'s validator on %s', (_what, host) => {
    const schemaAccepts = validateSetting([host]);
    expect(schemaAccepts, JSON.stringify(validateSetting.errors)).toBe(validatorAccepts(host));
  });

  it('requires "host" for an ssh host, so the editor underlines a host entry that lacks it', () => {
    expect(validateSetting([{ name: 'x', type: 'ssh' }])).toBe(false);
    expect(validateSetting.errors!.some((e) => e.keyword === 'required' && (e.params as { missingProperty?: string }).missingProperty === 'host')).toBe(true);
  });

  it('describes every field the validator reads', () => {
    const described = Object.keys(hostsSchema.items!.properties!);
    for (const field of ['name', 'type', 'host', 'port', 'user', 'identityFile', 'knownHostsFile', 'python', 'workdir', 'slots', 'devices',
      'hardware', 'partition', 'account', 'gres', 'timeLimit', 'maxJobs', 'sbatchOptions', 'idleTimeoutS', 'setup', 'toolchain']) {
      expect(described).toContain(field);
    }
  });
});
