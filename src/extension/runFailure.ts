// Why a run failed before it judged any candidate, in one sentence, and what fixes it, as the buttons of the
// notification: a GPU kernel on a machine with no GPU or no torch asks for a GPU host; an unreachable host
// for a check of the hosts; a spec or kernel that does not load or compile for the spec. No vscode import.
import type { Backend } from '../engine/spec';

export type FailureFix = 'addGpuHost' | 'openHostSettings' | 'checkHosts' | 'openSpec' | 'openSource' | 'showRun';

export const FIX_LABELS: Record<FailureFix, string> = {
  addGpuHost: 'Add GPU Host',
  openHostSettings: 'Open Settings',
  checkHosts: 'Check Hosts',
  openSpec: 'Open Spec',
  openSource: 'Open Kernel',
  showRun: 'Show Details',
};

export interface FailureDiagnosis {
  sentence: string;
  fixes: FailureFix[];
}

export interface FailedRun {
  backend?: Backend;
  /** The engine's error (kind and message), or the exception that ended the run. */
  kind?: 'host' | 'baseline' | 'operator';
  message: string;
  /** Every configured host is this machine. */
  localOnly: boolean;
  specName: string;
}

const MISSING_GPU_STACK = /No module named '?(torch|triton|cupy)'?|CUDA (driver|runtime).*(not|no)|no CUDA GPUs?|Found no NVIDIA driver|Torch not compiled with CUDA|torch\.cuda\.is_available\(\) is False|CUDA is not available|GPU that torch can use|nvidia-smi: not found/i;
const MISSING_NVCC = /nvcc\b.*(not found|No such file)|No such file.*\bnvcc\b/i;
const MISSING_CXX = /\b(g\+\+|c\+\+|clang\+\+)\b.*(not found|No such file)/i;
const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|timed out while connecting|All configured authentication methods failed|host key|Permission denied \(publickey|getaddrinfo/i;

function firstSentence(message: string): string {
  const line = message.split('\n').map((l) => l.trim()).find(Boolean) ?? message;
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

export function diagnoseRunFailure(f: FailedRun): FailureDiagnosis {
  const gpuBackend = f.backend === 'triton' || f.backend === 'cuda' || f.backend === 'hip';
  const what = (m: RegExpExecArray | null) => m?.[1] ? `${m[1]} is missing` : 'no GPU';
  if (gpuBackend && MISSING_GPU_STACK.test(f.message)) {
    const where = f.localOnly ? 'here' : 'on the host that judged it';
    return {
      sentence: `This ${f.backend === 'triton' ? 'Triton' : 'CUDA'} kernel needs a GPU host: ${what(MISSING_GPU_STACK.exec(f.message))} ${where} (${firstSentence(f.message)}).`,
      fixes: ['addGpuHost', 'openHostSettings'],
    };
  }
  if (gpuBackend && MISSING_NVCC.test(f.message)) {
    return { sentence: `This CUDA kernel needs a host with the CUDA compiler: nvcc was not found ${f.localOnly ? 'here' : 'on the host'}.`, fixes: ['addGpuHost', 'openHostSettings'] };
  }
  if (MISSING_CXX.test(f.message)) {
    return { sentence: `No C++ compiler was found to build the kernel: install g++ (e.g. apt-get install g++) or add a host that has one.`, fixes: ['openHostSettings', 'checkHosts'] };
  }
  if (f.kind === 'host' || UNREACHABLE.test(f.message)) {
    return { sentence: `A host could not judge the kernel: ${firstSentence(f.message)}`, fixes: ['checkHosts', 'openHostSettings'] };
  }
  if (/Importing \S+\.py failed|SpecError|\bspec\b.*(error|invalid)/i.test(f.message)) {
    return { sentence: `The spec ${f.specName} does not load: ${firstSentence(f.message)}`, fixes: ['openSpec', 'showRun'] };
  }
  if (f.kind === 'baseline') {
    return { sentence: `The kernel as it stands fails its own spec, so there is nothing to compare candidates with: ${firstSentence(f.message)}`, fixes: ['openSpec', 'openSource', 'showRun'] };
  }
  return { sentence: `The run failed before judging any candidate: ${firstSentence(f.message)}`, fixes: ['showRun', 'openHostSettings'] };
}
