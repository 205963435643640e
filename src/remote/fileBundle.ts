// A set of files sent to a host once and named by the hash of their content, so a host keeps one copy per
// version (`<workdir>/harness-<hash>/`, `<workdir>/specs/<hash>/`) and a changed file gets a new folder.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface FileBundle {
  /** Hex, 16 characters: enough to tell versions apart, short enough for paths. */
  hash: string;
  /** Relative path (forward slashes) -> content. */
  files: Map<string, Buffer>;
}

export function bundleOf(files: Map<string, Buffer>): FileBundle {
  const h = createHash('sha256');
  for (const name of [...files.keys()].sort()) {
    h.update(name).update('\0').update(String(files.get(name)!.length)).update('\0').update(files.get(name)!);
  }
  return { hash: h.digest('hex').slice(0, 16), files };
}

async function walk(dir: string, rel: string, into: Map<string, Buffer>): Promise<void> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    if (entry.name === '__pycache__' || entry.name.startsWith('.')) continue;
    const abs = path.join(dir, entry.name);
    const name = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) await walk(abs, name, into);
    else if (entry.isFile() && !/\.py[co]$/.test(entry.name)) into.set(name, await fs.readFile(abs));
  }
}

/** The harness package (the host agent is one of its modules): everything a host needs besides Python and the toolchain. */
export async function harnessBundle(harnessRoot: string): Promise<FileBundle> {
  const files = new Map<string, Buffer>();
  await walk(path.join(harnessRoot, 'kernelevolve_harness'), 'kernelevolve_harness', files);
  return bundleOf(files);
}

const SIBLING_MAX_BYTES = 256 * 1024;
const SIBLINGS_MAX = 64;

export type SpecBundle = FileBundle & { specRel: string; sourceRel: string };

/** Bundles already read, with the stamps (mtime, size) of what they were read from. */
const specBundles = new Map<string, { stamps: string; bundle: SpecBundle }>();

async function stampsOf(specPath: string, sourcePath: string, files: string[]): Promise<string> {
  const paths = [path.dirname(specPath), specPath, sourcePath, ...files];
  const stats = await Promise.all(paths.map((p) => fs.stat(p).then((st) => `${st.mtimeMs}:${st.size}`, () => 'gone')));
  return stats.join('|');
}

/**
 * The spec bundle, read again only when the spec's folder or one of its files changed: a search sends
 * hundreds of candidates of the same spec.
 */
export async function specBundle(specPath: string, sourcePath: string): Promise<SpecBundle> {
  const key = `${specPath}\0${sourcePath}`;
  const cached = specBundles.get(key);
  const root = bundleRoot(specPath, sourcePath);
  if (cached) {
    const files = [...cached.bundle.files.keys()].map((n) => path.join(root, n));
    if (await stampsOf(specPath, sourcePath, files) === cached.stamps) return cached.bundle;
  }
  const bundle = await readSpecBundle(specPath, sourcePath);
  const files = [...bundle.files.keys()].map((n) => path.join(root, n));
  specBundles.set(key, { stamps: await stampsOf(specPath, sourcePath, files), bundle });
  return bundle;
}

function bundleRoot(specPath: string, sourcePath: string): string {
  let root = path.dirname(specPath);
  while (path.relative(root, sourcePath).startsWith('..')) root = path.dirname(root);
  return root;
}

/**
 * The spec, its SOURCE and the small files beside the spec (headers, helper modules), laid out as they are
 * locally under their common folder, so the spec's relative paths hold on the host.
 */
async function readSpecBundle(specPath: string, sourcePath: string): Promise<SpecBundle> {
  const specDir = path.dirname(specPath);
  const root = bundleRoot(specPath, sourcePath);
  const files = new Map<string, Buffer>();
  const rel = (p: string) => path.relative(root, p).split(path.sep).join('/');
  let siblings = 0;
  for (const entry of await fs.readdir(specDir, { withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith('.') || /\.py[co]$/.test(entry.name)) continue;
    const abs = path.join(specDir, entry.name);
    if (abs === specPath || abs === sourcePath) continue;
    const stat = await fs.stat(abs);
    if (stat.size > SIBLING_MAX_BYTES || ++siblings > SIBLINGS_MAX) continue;
    files.set(rel(abs), await fs.readFile(abs));
  }
  files.set(rel(specPath), await fs.readFile(specPath));
  files.set(rel(sourcePath), await fs.readFile(sourcePath));
  return { ...bundleOf(files), specRel: rel(specPath), sourceRel: rel(sourcePath) };
}
