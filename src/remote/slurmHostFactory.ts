// Builds a Slurm host with the login shell its config asks for: SSH when "host" is set, this machine otherwise.
import type { HostOptions, SlurmHostConfig } from './hostConfig';
import { SlurmHost } from './slurmHost';
import { SshLoginShell } from './slurmSshLoginShell';

export function slurmHostFor(config: SlurmHostConfig, options: HostOptions = {}): SlurmHost {
  const shell = config.host ? new SshLoginShell({ ...config, host: config.host }, options) : undefined;
  return new SlurmHost(config, { shell });
}
