import { CliError } from './cliError';

export async function hostsCommand(_argv: string[]): Promise<number> {
  throw new CliError('hosts is not built yet.');
}
