// Finds a kernel's spec by content: a spec file whose SOURCE resolves to the kernel's file and whose
// KERNEL names the function. File names do not matter; nearer specs win over farther ones.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseSpecText, type KernelSpec } from '../engine/spec';

/** Among the given Python files, the specs of this kernel, nearest to the source first. */
export async function findSpecs(pythonFiles: readonly string[], sourcePath: string, kernel: string): Promise<KernelSpec[]> {
  const target = path.resolve(sourcePath);
  const found: KernelSpec[] = [];
  await Promise.all(pythonFiles.map(async (file) => {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch {
      return;
    }
    // Cheap filter before parsing: every spec names its kernel.
    if (!text.includes('KERNEL') || !text.includes(kernel)) return;
    try {
      const spec = parseSpecText(text, file);
      if (spec.kernel === kernel && path.resolve(spec.sourcePath) === target) found.push(spec);
    } catch {
      // Not a spec (or a broken one): not ours to report here.
    }
  }));
  const distance = (s: KernelSpec) => path.relative(path.dirname(target), path.dirname(s.specPath)).split(path.sep).filter(Boolean).length;
  return found.sort((a, b) => distance(a) - distance(b) || a.specPath.localeCompare(b.specPath));
}
