// Drafts the spec of a kernel as the editor's Evolve does when it finds none, without the editor: for the GPU
// part that checks drafted Triton specs run as drafted. Usage: node dist/draft-spec.js SOURCE KERNEL OUT.py
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { grammarFor, KernelLocator } from '../src/engine/kernelLocator';
import { draftSpec } from '../src/extension/specDraft';

async function main(): Promise<number> {
  const [source, kernel, out] = process.argv.slice(2);
  if (!source || !kernel || !out) {
    process.stderr.write('usage: node dist/draft-spec.js SOURCE KERNEL OUT.py\n');
    return 2;
  }
  const text = readFileSync(source, 'utf8');
  const locator = await KernelLocator.get();
  const site = locator.byName(text, grammarFor(source) ?? 'cpp', kernel);
  if (!site) {
    process.stderr.write(`${kernel} is not a kernel of ${source} (kernels: ${locator.find(text, grammarFor(source) ?? 'cpp').map((k) => k.name).join(', ') || 'none'})\n`);
    return 1;
  }
  const draft = draftSpec(locator, site, path.resolve(source), text);
  // The spec names SOURCE relative to itself: written elsewhere, it points back at the source.
  writeFileSync(out, draft.text.replace(/^SOURCE = ".*"$/m, `SOURCE = ${JSON.stringify(path.relative(path.dirname(path.resolve(out)), path.resolve(source)))}`));
  process.stdout.write(`${draft.estimate ?? ''}${draft.warning ? ` WARNING: ${draft.warning}` : ''}\n`);
  return 0;
}

main().then((code) => process.exit(code), (e) => { process.stderr.write(`${(e as Error).stack}\n`); process.exit(1); });
