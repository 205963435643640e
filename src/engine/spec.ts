// Reads the contract names of a kernel spec (BACKEND, SOURCE, KERNEL) from its text, without running Python, so
// the editor can find a spec's kernel among many files at once. Where a run or an evaluation starts, the harness
// itself reads the spec (`describe-spec`, src/remote/specDescription.ts); both accept the same backends.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { BACKENDS, type Backend, type KernelSpec, SpecError } from '../contract/spec';
import { isKernelBenchProblem, missingProblemParts, problemSpec } from './kernelBenchProblem';

export { BACKENDS, SpecError };
export type { Backend, KernelSpec };

function stringConstant(text: string, name: string): string | undefined {
  const re = new RegExp(`^${name}\\s*(?::\\s*str\\s*)?=\\s*(?:r|u)?(['"])(.*?)\\1\\s*(?:#.*)?$`, 'm');
  const m = re.exec(text);
  return m ? m[2] : undefined;
}

/** Parses the spec's header constants; the rest of the contract is the harness's to check. */
export function parseSpecText(text: string, specPath: string): KernelSpec {
  const where = path.basename(specPath);
  if (isKernelBenchProblem(text)) return problemSpec(text, specPath);
  const parts = missingProblemParts(text);
  if (parts.length) {
    throw new SpecError(`${where} looks like a KernelBench problem but does not define ${parts.join(', ')}; a problem defines class Model, get_inputs() and get_init_inputs() (see docs/kernelbench.md).`);
  }
  const missing = ['BACKEND', 'SOURCE', 'KERNEL'].filter((n) => stringConstant(text, n) === undefined);
  if (missing.length) {
    throw new SpecError(
      `${where} does not define ${missing.join(', ')} as a plain string at module level; ` +
        `a spec needs e.g. BACKEND = "cpp", SOURCE = "kernel.cpp", KERNEL = "my_kernel" (see docs/harness.md).`,
    );
  }
  const backend = stringConstant(text, 'BACKEND')!;
  if (!(BACKENDS as readonly string[]).includes(backend)) {
    throw new SpecError(`${where}: BACKEND is "${backend}"; use one of ${BACKENDS.join(', ')}.`);
  }
  for (const fn of ['inputs', 'launch']) {
    if (!new RegExp(`^def\\s+${fn}\\s*\\(`, 'm').test(text)) {
      throw new SpecError(`${where} does not define ${fn}(...) at module level; a spec needs inputs(shape, seed) and launch(k, *args).`);
    }
  }
  if (!/^SHAPES\s*(?::[^=]*)?=/m.test(text)) {
    throw new SpecError(`${where} does not define SHAPES, the list of problem sizes (one dict per size).`);
  }
  return {
    specPath: path.resolve(specPath),
    backend: backend as Backend,
    sourcePath: path.resolve(path.dirname(specPath), stringConstant(text, 'SOURCE')!),
    kernel: stringConstant(text, 'KERNEL')!,
  };
}

export async function loadSpec(specPath: string): Promise<KernelSpec> {
  let text: string;
  try {
    text = await fs.readFile(specPath, 'utf8');
  } catch {
    throw new SpecError(`Cannot read the spec ${specPath}: check the path given to --spec.`);
  }
  const spec = parseSpecText(text, specPath);
  try {
    await fs.access(spec.sourcePath);
  } catch {
    throw new SpecError(
      `${path.basename(specPath)} names SOURCE ${path.relative(path.dirname(specPath), spec.sourcePath)}, which does not exist next to the spec.`,
    );
  }
  return spec;
}
