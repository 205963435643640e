// `kernelevolve evaluate --spec S --candidate C [--host NAME] [--config FILE] [--json]`
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { SpecError } from '../engine/spec';
import { describeSpec } from '../remote/specDescription';
import type { Verdict } from '../contract/verdict';
import { createHosts, loadConfig, NO_HOSTS } from '../remote/hostConfig';
import '../remote/hosts';
import { CliError, EXIT } from './cliError';
import { cliHostOptions } from './sshPrompts';
import { inputsOption } from './inputsOption';
import { formatVerdict } from './verdictFormat';

export const EVALUATE_USAGE = `usage: kernelevolve evaluate --spec SPEC.py --candidate FILE [--baseline FILE] [--host NAME]
                            [--config FILE] [--profile] [--inputs wide|problem] [--memory-share F] [--json]`;

export async function evaluateCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      spec: { type: 'string' },
      candidate: { type: 'string' },
      baseline: { type: 'string' },
      host: { type: 'string', multiple: true },
      config: { type: 'string' },
      profile: { type: 'boolean', default: false },
      inputs: { type: 'string' },
      'memory-share': { type: 'string' },
      json: { type: 'boolean', default: false },
      'accept-new-host-key': { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.spec || !values.candidate) throw new CliError(`evaluate needs --spec and --candidate.\n${EVALUATE_USAGE}`);
  const inputs = inputsOption(values.inputs);
  const memoryShare = values['memory-share'] === undefined ? undefined : Number(values['memory-share']);
  if (memoryShare !== undefined && !(memoryShare > 0 && memoryShare <= 1)) {
    throw new CliError(`--memory-share is the fraction of the device's memory the evaluation keeps to, above 0 and at most 1 (e.g. 0.25 for one of four side by side); got "${values['memory-share']}".`);
  }
  const spec = await describeSpec(values.spec);
  let candidateSource: string;
  try {
    candidateSource = await fs.readFile(values.candidate, 'utf8');
  } catch {
    throw new CliError(`Cannot read the candidate ${values.candidate}: check the path given to --candidate.`);
  }
  const config = await loadConfig(values.config);
  const [host] = createHosts(config, values.host ?? [], cliHostOptions({ acceptNewHostKey: values['accept-new-host-key'] }));
  if (!host) throw new CliError(NO_HOSTS);
  // A Slurm host says which job and node took the candidate: progress, so stderr (stdout stays the verdict).
  host.onLog?.((level, message) => process.stderr.write(`${level === 'info' ? '' : `${level}: `}${message}\n`));
  let verdict: Verdict;
  try {
    verdict = await host.evaluate({
      id: 'eval',
      specPath: spec.specPath,
      baselinePath: values.baseline ? path.resolve(values.baseline) : spec.sourcePath,
      candidateSource,
      candidateFileName: path.basename(values.candidate),
      profile: values.profile,
      ...(inputs ? { inputs } : {}),
      ...(memoryShare !== undefined ? { memoryShare } : {}),
    });
  } catch (e) {
    if (e instanceof SpecError) throw e; // the harness found the spec wrong: exit 2 with its sentence
    throw new CliError(`Host "${host.name}" could not evaluate the candidate: ${(e as Error).message}`, EXIT.hostFailure);
  } finally {
    await host.dispose();
  }
  if (values.json) process.stdout.write(JSON.stringify(verdict) + '\n');
  else process.stdout.write(formatVerdict(verdict) + '\n');
  return verdict.status === 'ok' ? EXIT.ok : EXIT.notOk;
}
