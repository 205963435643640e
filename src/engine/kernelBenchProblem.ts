// KernelBench-format problem files (class Model, get_inputs(), get_init_inputs(), module-level sizes, no
// BACKEND/SOURCE/KERNEL) read as specs: the problem is its own spec and its own baseline source, and the
// evolved code is a whole file defining ModelNew. The harness turns the problem into an ordinary spec
// (harness/kernelevolve_harness/kernelbench.py); see docs/kernelbench.md.
import * as path from 'node:path';

/** The class a candidate defines; the engine names it as the "kernel" being evolved. */
export const MODEL_NEW = 'ModelNew';

export type ModelBackend = 'model-cuda' | 'model-cpu';

function definesTopLevel(text: string, re: RegExp): boolean {
  return re.test(text);
}

/** True when the text is a KernelBench-format problem rather than a spec of our own. */
export function isKernelBenchProblem(text: string): boolean {
  if (/^BACKEND\s*(?::[^=]*)?=/m.test(text)) return false;
  return definesTopLevel(text, /^class\s+Model\s*[(:]/m)
    && definesTopLevel(text, /^def\s+get_inputs\s*\(/m)
    && definesTopLevel(text, /^def\s+get_init_inputs\s*\(/m);
}

/** Which of Model / get_inputs / get_init_inputs a file lacks, when it has some of them and no BACKEND. */
export function missingProblemParts(text: string): string[] {
  if (/^BACKEND\s*(?::[^=]*)?=/m.test(text)) return [];
  const parts: Array<[string, RegExp]> = [
    ['class Model', /^class\s+Model\s*[(:]/m],
    ['get_inputs()', /^def\s+get_inputs\s*\(/m],
    ['get_init_inputs()', /^def\s+get_init_inputs\s*\(/m],
  ];
  const have = parts.filter(([, re]) => re.test(text));
  return have.length && have.length < parts.length ? parts.filter(([, re]) => !re.test(text)).map(([n]) => n) : [];
}

/** torch problems run on the GPU (Triton ModelNew); numpy problems on the CPU (C++ in CPP_SOURCE). */
export function problemBackend(text: string): ModelBackend {
  return /^\s*(?:import\s+torch\b|from\s+torch\b)/m.test(text) ? 'model-cuda' : 'model-cpu';
}

export function problemSpec(text: string, specPath: string): { specPath: string; backend: ModelBackend; sourcePath: string; kernel: string } {
  const abs = path.resolve(specPath);
  return { specPath: abs, backend: problemBackend(text), sourcePath: abs, kernel: MODEL_NEW };
}

export function isModelBackend(backend: string): backend is ModelBackend {
  return backend === 'model-cuda' || backend === 'model-cpu';
}
