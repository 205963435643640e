// The `kernelevolve` command: the same engine and hosts as the extension, without the editor.
import { SpecError } from '../engine/spec';
import { ConfigError } from '../contract/config';
import { CliError, EXIT } from './cliError';
import { evaluateCommand, EVALUATE_USAGE } from './evaluateCommand';

const USAGE = `kernelevolve — make kernels faster by search

${EVALUATE_USAGE}
usage: kernelevolve evolve --spec SPEC.py [--operators tune,llm] [--budget N] [--time MIN] [--host NAME ...]
                          [--config FILE] [--model M] [--json] [--out DIR] [--resume RUNDIR]
usage: kernelevolve suite DIR [--budget N] [--operators tune,llm] [--model M] [--host NAME ...]
                         [--config FILE] [--json] [--out DIR] [--compile all|none|N] [--time MIN] [--self-judge]
usage: kernelevolve suite --resume OUT [--host NAME ...] [--config FILE] [--json]
usage: kernelevolve hosts [--config FILE] [--check]

Exit codes: 0 ok, 1 judged but not ok / nothing better found, 2 bad arguments, spec or config,
3 a host failed, 130 stopped.`;

type Command = (argv: string[]) => Promise<number>;

/** The usage text with only the named command's usage lines (all of them for an unknown name). */
function usageOf(name: string): string {
  if (!USAGE.includes(`usage: kernelevolve ${name} `)) return USAGE;
  let keep = true;
  return USAGE.split('\n').filter((line) => {
    if (line.startsWith('usage: ')) keep = line.startsWith(`usage: kernelevolve ${name} `);
    else if (!/^\s/.test(line)) keep = true;
    return keep;
  }).join('\n');
}

async function lazy(name: string): Promise<Command | undefined> {
  switch (name) {
    case 'evaluate':
      return evaluateCommand;
    case 'evolve':
      return (await import('./evolveCommand')).evolveCommand;
    case 'suite':
      return (await import('./suiteCommand')).suiteCommand;
    case 'hosts':
      return (await import('./hostsCommand')).hostsCommand;
    default:
      return undefined;
  }
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE + '\n');
    return name ? EXIT.ok : EXIT.usage;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(usageOf(name) + '\n');
    return EXIT.ok;
  }
  try {
    const command = await lazy(name);
    if (!command) throw new CliError(`Unknown command "${name}".\n${USAGE}`);
    return await command(rest);
  } catch (e) {
    const err = e as Error & { code?: string };
    if (e instanceof CliError) {
      process.stderr.write(`kernelevolve: ${e.message}\n`);
      return e.exitCode;
    }
    if (e instanceof SpecError || e instanceof ConfigError || (err.code ?? '').startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`kernelevolve: ${err.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`kernelevolve: unexpected error: ${err.message}\n${err.stack ?? ''}\n`);
    return EXIT.hostFailure;
  }
}
