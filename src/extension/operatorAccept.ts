// Accepting a kernel found for a PyTorch (or numpy) operator: the winning ModelNew file goes next to the
// operator's module as <module>_<name>_kernel.py (with a function of the operator's signature that calls it),
// and the operator's body becomes a call of that function. With the fallback, the original body stays below
// the call and runs where the kernel was not judged (another device or dtype). Plain text in, edits out: the
// command turns them into one WorkspaceEdit (undoable as one), and tests apply them to files.
import type { PythonOperator } from '../engine/operatorSource';
import { findOperators } from '../engine/operatorSource';

/** A CPU kernel file outside the harness: CPP_SOURCE built once (by g++, as the harness built it) and `cpp`
 *  bound with the harness's calling convention (arrays as pointers, ints as int64_t, floats as double). */
const CPP_LOADER = `

def _load_cpp():
    import ctypes
    import hashlib
    import os
    import subprocess
    cache = os.path.join(os.path.expanduser("~"), ".cache", "kernelevolve", "accepted")
    os.makedirs(cache, exist_ok=True)
    lib = os.path.join(cache, hashlib.sha256(CPP_SOURCE.encode()).hexdigest()[:24] + ".so")
    if not os.path.exists(lib):
        src = lib[:-3] + ".cpp"
        with open(src, "w") as f:
            f.write(CPP_SOURCE)
        subprocess.run([os.environ.get("CXX", "g++"), "-O3", "-march=native", "-std=c++17", "-shared", "-fPIC", src,
                        "-o", lib + ".tmp"], check=True)
        os.replace(lib + ".tmp", lib)
    dll = ctypes.CDLL(lib)

    class Library:
        def __getattr__(self, name):
            fn = getattr(dll, name)
            fn.restype = None

            def call(*args):
                out = []
                for a in args:
                    if isinstance(a, np.ndarray):
                        if not a.flags.c_contiguous:
                            raise TypeError(name + ": pass C-contiguous arrays (np.ascontiguousarray)")
                        out.append(ctypes.c_void_p(a.ctypes.data))
                    elif isinstance(a, (bool, int, np.integer)):
                        out.append(ctypes.c_int64(int(a)))
                    else:
                        out.append(ctypes.c_double(float(a)))
                fn(*out)
            return call
    return Library()


cpp = _load_cpp()
`;

export interface OperatorAcceptInput {
  moduleText: string;
  /** The operator's module file name (base name). */
  moduleFile: string;
  name: string;
  /** The winning candidate: a whole file defining ModelNew. */
  candidate: string;
  /** model-cuda (torch tensors on the GPU) or model-cpu (numpy arrays or CPU tensors). */
  backend: string;
  /** Keep the original body as the path for inputs the kernel was not judged on. */
  fallback: boolean;
  /** The dtype the kernel was judged on (float32 unless the problem said otherwise). */
  dtype?: string;
  /** The module's folder is a package (has __init__.py): import the kernel relatively. */
  inPackage?: boolean;
  /** What the kernel file says about where it came from (run, candidate, speedup). */
  provenance: string;
}

export type OperatorAcceptPlan =
  | { ok: true; kernelFileName: string; kernelText: string; edit: { start: number; end: number; text: string } }
  | { ok: false; reason: string };

/** Where a def's header ends (after its colon) and its docstring, if any, ends. */
function bodyStart(text: string, op: PythonOperator, defRe: RegExp): { headerEnd: number; afterDoc: number; indent: string } | undefined {
  const block = text.slice(op.start, op.end);
  const def = defRe.exec(block);
  if (!def) return undefined;
  let depth = 0;
  let i = op.start + def.index + def[0].length - 1; // at "("
  for (; i < op.end; i++) {
    const ch = text[i];
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    else if (ch === ':' && depth === 0) break;
  }
  const headerEnd = text.indexOf('\n', i) + 1;
  if (headerEnd <= 0) return undefined;
  const indent = /^[ \t]+/.exec(text.slice(headerEnd))?.[0] ?? '    ';
  let afterDoc = headerEnd;
  const doc = new RegExp(`^${indent}[rRuU]?("""|''')[\\s\\S]*?\\1[^\\n]*\\n`).exec(text.slice(headerEnd));
  if (doc) afterDoc = headerEnd + doc[0].length;
  return { headerEnd, afterDoc, indent };
}

function bodyEnd(text: string, from: number, limit: number, outer: string): number {
  // a method's body ends at the next line indented no deeper than its def
  const lines = text.slice(from, limit).split('\n');
  let at = from;
  for (const line of lines) {
    if (line.trim() && !line.startsWith(outer + ' ') && !line.startsWith(outer + '\t') && outer !== '' ) break;
    at += line.length + 1;
  }
  return Math.min(at, limit);
}

function guard(backend: string, arrays: string[], dtype: string): string {
  if (!arrays.length) return 'True';
  if (backend === 'model-cuda') return arrays.map((a) => `${a}.is_cuda and ${a}.dtype == torch.${dtype}`).join(' and ');
  return arrays.map((a) => `getattr(${a}, "dtype", None) == np.${dtype}`).join(' and ');
}

export function planOperatorAccept(input: OperatorAcceptInput): OperatorAcceptPlan {
  const op = findOperators(input.moduleText).find((o) => o.name === input.name);
  if (!op) return { ok: false, reason: `${input.moduleFile} no longer defines ${input.name} as a function or module that computes with torch or numpy; the kernel cannot be put in its place.` };
  if (!/^\s*class\s+ModelNew\b/m.test(input.candidate)) return { ok: false, reason: 'The candidate does not define ModelNew.' };
  const stem = input.moduleFile.replace(/\.py$/, '');
  const kernelModule = `${stem}_${input.name}_kernel`;
  const dtype = input.dtype ?? 'float32';
  const params = op.params.map((p) => p.name);
  const arrays = op.params.filter((p) => !/^(int|float|bool|str)\b/.test(p.annotation ?? '') && !/^-?[\d.]+$/.test(p.defaultText ?? '')).map((p) => p.name);
  const entry = op.kind === 'function' ? `${input.name}_kernel` : 'forward_kernel';
  const wrapper = op.kind === 'function'
    ? [
      '',
      '',
      `_model = None  # made at the first call (its __init__ takes no arguments: ${input.name} has no weights)`,
      '',
      '',
      `def ${entry}(${params.join(', ')}):`,
      `    """${input.name} through the kernel above: the same arguments and results."""`,
      '    global _model',
      '    if _model is None:',
      '        _model = ModelNew()',
      `    return _model.forward(${params.join(', ')})`,
    ]
    : [
      '',
      '',
      `def ${entry}(module, ${params.join(', ')}):`,
      `    """${input.name}.forward through the kernel above, on the module's own weights (ModelNew names them as ${input.name} does)."""`,
      `    return ModelNew.forward(module, ${params.join(', ')})`,
    ];
  const cpu = /^CPP_SOURCE\s*=/m.test(input.candidate);
  const loader = cpu ? (/^import numpy as np$/m.test(input.candidate) ? CPP_LOADER : '\nimport numpy as np' + CPP_LOADER) : '';
  const kernelText = `# ${input.provenance}\n${input.candidate.trimEnd()}\n${loader}${wrapper.join('\n')}\n`;
  const importLine = input.inPackage ? `from .${kernelModule} import ${entry}` : `from ${kernelModule} import ${entry}`;

  let where: { headerEnd: number; afterDoc: number; indent: string } | undefined;
  let end = op.end;
  if (op.kind === 'function') where = bodyStart(input.moduleText, op, new RegExp(`^(?:async\\s+)?def\\s+${input.name}\\s*\\(`, 'm'));
  else {
    where = bodyStart(input.moduleText, op, /^[ \t]+def\s+forward\s*\(/m);
    if (where) {
      const outer = /^([ \t]*)def\s+forward/m.exec(input.moduleText.slice(op.start, op.end))![1];
      end = bodyEnd(input.moduleText, where.headerEnd, op.end, outer);
    }
  }
  if (!where) return { ok: false, reason: `Cannot find the body of ${input.name}${op.kind === 'module' ? '.forward' : ''} in ${input.moduleFile}.` };
  end = where.afterDoc + input.moduleText.slice(where.afterDoc, end).trimEnd().length;
  const ind = where.indent;
  const call = op.kind === 'function' ? `${entry}(${params.join(', ')})` : `${entry}(self, ${params.join(', ')})`;
  const original = input.moduleText.slice(where.afterDoc, end);
  const lines = [`${ind}${importLine}  # the kernel KernelEvolve found (${kernelModule}.py)`];
  if (input.fallback) {
    lines.push(`${ind}if ${guard(input.backend, arrays, dtype)}:  # what the kernel was judged on`, `${ind}    return ${call}`, original);
  } else lines.push(`${ind}return ${call}`);
  return {
    ok: true,
    kernelFileName: `${kernelModule}.py`,
    kernelText,
    edit: { start: where.afterDoc, end, text: lines.join('\n') },
  };
}
