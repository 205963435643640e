// `--inputs wide|problem` of evaluate, evolve and suite: passed through to the harness (its robustness pass).
import { INPUT_MODES, type InputsMode } from '../contract/job';
import { CliError } from './cliError';

export const INPUTS_HELP = '--inputs problem judges by the spec\'s inputs alone (no robustness pass on wider inputs), as KernelBench does';

/** The flag's value, checked; undefined when not given. */
export function inputsOption(value: string | undefined): InputsMode | undefined {
  if (value === undefined) return undefined;
  if (!(INPUT_MODES as readonly string[]).includes(value)) {
    throw new CliError(`--inputs must be ${INPUT_MODES.join(' or ')}, not "${value}"; ${INPUTS_HELP}.`);
  }
  return value as InputsMode;
}
