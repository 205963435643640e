import { CliError } from './cliError';

export async function evolveCommand(_argv: string[]): Promise<number> {
  throw new CliError('evolve is not built yet.');
}
