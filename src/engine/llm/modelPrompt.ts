// The system message for KernelBench-format problems: the model writes a whole Python file defining
// ModelNew, whose forward computes what the problem's Model computes with kernels of its own (Triton on a
// GPU, C++ given as CPP_SOURCE on a CPU host). The rules are the harness's (docs/kernelbench.md).
import type { KernelSpec } from '../spec';

export function modelSystemMessage(spec: KernelSpec, hardware: string | undefined): string {
  const gpu = spec.backend === 'model-cuda';
  const where = hardware ? ` on ${hardware}` : '';
  const kernels = gpu
    ? [
      '- Write the computation as Triton kernels (@triton.jit) launched from ModelNew.forward; import torch, torch.nn as nn, triton, triton.language as tl.',
      '- forward may allocate (torch.empty, torch.empty_like), reshape and view tensors; it may not compute with torch (no torch.matmul, torch.nn.functional, tensor arithmetic, or calling layers): the harness refuses those as the reference\'s own operators.',
      '- Layers made in __init__ may hold weights (self.linear = nn.Linear(...)); read their .weight and .bias in your kernels.',
    ]
    : [
      '- Write the computation in C++ as the module-level string CPP_SOURCE = r"""...""" with extern "C" functions; the harness compiles it and exposes it as `cpp`.',
      '- Call it from forward as cpp.<function>(out, x, ..., n): arrays pass as pointers to their data (C-contiguous), ints as int64_t, floats as double.',
      '- forward may allocate (np.empty_like, np.empty, np.zeros); it may not compute with numpy (no np.maximum, np.exp, arithmetic on arrays): the harness refuses those as the reference\'s own operators.',
      '- No threads, OpenMP, I/O or library calls in the C++.',
    ];
  return [
    `You are an expert performance engineer who writes fast kernels${where} for PyTorch-style models.`,
    'The problem file defines class Model (its forward is the reference), get_inputs() and get_init_inputs().',
    `You write the whole Python file of class ${spec.kernel}: the same __init__ arguments as Model, the same forward inputs and outputs, ${toleranceSentence(spec)}.`,
    'Every answer is checked against Model on every shape listed in the problem (odd sizes included) and several seeds, and timed against it.',
    '',
    'Rules:',
    ...kernels,
    '- Weights: parameters or attributes named as in Model get Model\'s values; give yours the same names and shapes.',
    '- Handle every size: tails that are not multiples of a block need masks or a remainder loop.',
    '- Do not cache results between calls or special-case the test inputs.',
    '',
    'Answer format:',
    '1. One paragraph starting with "Rationale:" that says what your kernels do and why they should be fast.',
    `2. Then the whole file defining ${spec.kernel} in one fenced \`\`\`python block (or SEARCH/REPLACE blocks against the current code when refining it).`,
    'Give exactly one version of the code. Write no other code blocks.',
  ].join('\n');
}

/** The judge's own rule, as the harness stated it for this problem (KernelSpec.judgedTolerance). */
export function toleranceSentence(spec: KernelSpec): string {
  const t = spec.judgedTolerance;
  if (!t || !Object.keys(t).length) return 'within the tolerance the judge applies to the outputs\' dtype (each verdict states it)';
  const pairs = ['float32', 'float16', 'bfloat16'].filter((d) => t[d]).map((d) => `${d} rtol ${t[d].rtol} atol ${t[d].atol}`);
  return `each element within the judge's tolerance, |out - ref| <= atol + rtol * |ref| (${pairs.join('; ')})`;
}
