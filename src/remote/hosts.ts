// Registers every host kind with hostConfig's factory, so createHosts can build them while hostConfig.ts
// itself imports no ssh2. The CLI and the extension import this module once.
import type { HostOptions, SlurmHostConfig, SshHostConfig } from './hostConfig';
import { registerHostType } from './hostConfig';
import { SshHost } from './sshHost';
import { slurmHostFor } from './slurmHostFactory';

/**
 * Front ends that pass no callbacks still get the CLI's conventions: KERNELEVOLVE_ACCEPT_NEW_HOST_KEY=1
 * (what --accept-new-host-key sets) trusts unknown keys, KERNELEVOLVE_SSH_PASSPHRASE unlocks keys.
 * A mismatched key is refused whatever is set.
 */
export function withEnvironmentDefaults(options: HostOptions = {}): HostOptions {
  return {
    ...options,
    onUnknownHostKey: options.onUnknownHostKey
      ?? (process.env.KERNELEVOLVE_ACCEPT_NEW_HOST_KEY === '1' ? async () => true : undefined),
    askPassphrase: options.askPassphrase
      ?? (process.env.KERNELEVOLVE_SSH_PASSPHRASE ? async () => process.env.KERNELEVOLVE_SSH_PASSPHRASE : undefined),
  };
}

registerHostType('ssh', (config, options) => new SshHost(config as SshHostConfig, withEnvironmentDefaults(options)));
registerHostType('slurm', (config, options) => slurmHostFor(config as SlurmHostConfig, withEnvironmentDefaults(options)));

export { SshHost };
