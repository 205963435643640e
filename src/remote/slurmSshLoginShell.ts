// The login node reached over SSH: the Slurm host's commands run on the SSH host's shared connection
// (host keys, ~/.ssh/config, ProxyJump and reconnects are the SSH code's).
import type { HostOptions, SlurmHostConfig } from './hostConfig';
import { expandHome } from './hostConfig';
import { resolveSshTarget } from './sshConfigFile';
import { SshConnection } from './sshConnection';
import type { LoginShell, ShellExecOptions, ShellResult } from './slurmLoginShell';

export class SshLoginShell implements LoginShell {
  readonly where: string;
  private readonly connection: Promise<SshConnection>;

  constructor(config: SlurmHostConfig & { host: string }, options: HostOptions = {}) {
    this.where = `${config.user ? `${config.user}@` : ''}${config.host}${config.port ? `:${config.port}` : ''}`;
    this.connection = (async () => {
      const target = await resolveSshTarget(config.host, {
        port: config.port,
        user: config.user,
        identityFile: config.identityFile ? expandHome(config.identityFile) : undefined,
        knownHostsFile: config.knownHostsFile ? expandHome(config.knownHostsFile) : undefined,
      }, options.sshConfigFile);
      return new SshConnection({ name: config.name, target, askPassphrase: options.askPassphrase, onUnknownHostKey: options.onUnknownHostKey });
    })();
    this.connection.catch(() => undefined); // surfaces on first exec
  }

  async exec(command: string, opts: ShellExecOptions = {}): Promise<ShellResult> {
    const conn = await this.connection;
    const r = await conn.run(command, opts.stdin, (opts.timeoutS ?? 600) * 1000);
    return { code: r.code, stdout: r.stdout, stderr: r.stderr };
  }

  async dispose(): Promise<void> {
    const conn = await this.connection.catch(() => undefined);
    await conn?.close();
  }
}
