// Finds the kernels of a source file with tree-sitter: `@triton.jit` functions (Python), CUDA `__global__`
// functions and extern "C" C++ functions (C++ grammar, which also reads CUDA). No vscode import, so the
// unit tests and the accept logic use it as it is.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as TreeSitter from 'web-tree-sitter';
import type { Node, Parser } from 'web-tree-sitter';

// The CommonJS build: the ESM one needs import.meta.url, which the extension's CommonJS bundle lacks.
const { Language, Parser: ParserClass } = require('web-tree-sitter') as typeof TreeSitter;

export type KernelKind = 'triton' | 'cuda' | 'cpp';
export type GrammarName = 'python' | 'cpp';

export interface KernelSite {
  name: string;
  kind: KernelKind;
  /** Offsets into the text (UTF-16 code units): the whole definition, decorators included. */
  start: number;
  end: number;
  /** Zero-based lines of the definition's first and last line. */
  startLine: number;
  endLine: number;
  /** The definition's header up to its body, e.g. `extern "C" void matmul(const float* a, ...)`. */
  signature: string;
  /** Parameter names in order. */
  params: string[];
}

/** The grammar for a file, by VS Code language id or by file name; undefined when no kernel can live there. */
export function grammarFor(languageIdOrFile: string): GrammarName | undefined {
  const s = languageIdOrFile.toLowerCase();
  if (s === 'python' || s.endsWith('.py')) return 'python';
  if (['cpp', 'c', 'cuda', 'cuda-cpp'].includes(s)) return 'cpp';
  if (/\.(c|cc|cpp|cxx|cu|cuh|h|hpp|hip)$/.test(s)) return 'cpp';
  return undefined;
}

function wasmDirs(): string[] {
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  return [
    process.env.KERNELEVOLVE_WASM_DIR,
    path.join(here, 'wasm'), // dist/extension.js -> dist/wasm
    path.join(here, '..', '..', 'dist', 'wasm'),
    path.join(here, '..', '..', 'node_modules', '@vscode', 'tree-sitter-wasm', 'wasm'), // vitest, from src/
    path.join(process.cwd(), 'node_modules', '@vscode', 'tree-sitter-wasm', 'wasm'),
  ].filter((d): d is string => !!d);
}

function runtimeWasm(grammarDir: string): string {
  // The runtime must be web-tree-sitter's own build; the grammars package ships a runtime of another version.
  const beside = path.join(grammarDir, 'web-tree-sitter.wasm');
  if (fs.existsSync(beside)) return beside;
  const fromPackage = path.join(grammarDir, '..', '..', '..', 'web-tree-sitter', 'tree-sitter.wasm');
  if (fs.existsSync(fromPackage)) return fromPackage;
  return path.join(process.cwd(), 'node_modules', 'web-tree-sitter', 'tree-sitter.wasm');
}

export class KernelLocator {
  private static instance: Promise<KernelLocator> | undefined;

  private constructor(private readonly parsers: Record<GrammarName, Parser>) {}

  /** One locator per process: loading the grammars takes a few hundred milliseconds. */
  static get(): Promise<KernelLocator> {
    KernelLocator.instance ??= KernelLocator.load().catch((e) => {
      KernelLocator.instance = undefined;
      throw e;
    });
    return KernelLocator.instance;
  }

  private static async load(): Promise<KernelLocator> {
    const dir = wasmDirs().find((d) => fs.existsSync(path.join(d, 'tree-sitter-cpp.wasm')));
    if (!dir) {
      throw new Error(`KernelEvolve cannot find its tree-sitter grammars (looked in ${wasmDirs().join(', ')}); reinstall the extension.`);
    }
    const runtime = runtimeWasm(dir);
    await ParserClass.init({ locateFile: () => runtime });
    const make = async (file: string) => {
      const p = new ParserClass();
      p.setLanguage(await Language.load(path.join(dir, file)));
      return p;
    };
    return new KernelLocator({ python: await make('tree-sitter-python.wasm'), cpp: await make('tree-sitter-cpp.wasm') });
  }

  /** Every kernel of the text, in source order. */
  find(text: string, grammar: GrammarName): KernelSite[] {
    const tree = this.parsers[grammar].parse(text);
    if (!tree) return [];
    try {
      return grammar === 'python' ? tritonKernels(tree.rootNode, text) : cppKernels(tree.rootNode, text);
    } finally {
      tree.delete();
    }
  }

  /** Runs `read` over the file's syntax tree (freed afterwards). */
  withTree<T>(text: string, grammar: GrammarName, read: (root: Node) => T): T | undefined {
    const tree = this.parsers[grammar].parse(text);
    if (!tree) return undefined;
    try {
      return read(tree.rootNode);
    } finally {
      tree.delete();
    }
  }

  /** The kernel whose definition holds the offset. */
  at(text: string, grammar: GrammarName, offset: number): KernelSite | undefined {
    return this.find(text, grammar).find((k) => k.start <= offset && offset <= k.end);
  }

  byName(text: string, grammar: GrammarName, name: string): KernelSite | undefined {
    return this.find(text, grammar).find((k) => k.name === name);
  }
}

function site(node: Node, text: string, name: string, kind: KernelKind, body: Node | null, params: string[]): KernelSite {
  const start = node.startIndex;
  const end = node.endIndex;
  const header = text.slice(start, body ? body.startIndex : end).trim();
  return {
    name, kind, start, end,
    startLine: node.startPosition.row,
    endLine: node.endPosition.row,
    signature: header.replace(/\s*:\s*$/, '').replace(/\s+/g, ' '),
    params,
  };
}

const TRITON_DECORATOR = /^@\s*(triton\s*\.\s*)?(jit|autotune|heuristics)\b/;

function tritonKernels(root: Node, text: string): KernelSite[] {
  const out: KernelSite[] = [];
  for (const node of root.descendantsOfType('decorated_definition')) {
    if (!node) continue;
    const decorators = node.namedChildren.filter((c) => c?.type === 'decorator').map((c) => c!.text);
    if (!decorators.some((d) => TRITON_DECORATOR.test(d))) continue;
    const def = node.childForFieldName('definition');
    if (!def || def.type !== 'function_definition') continue;
    // A kernel that does not parse is not one to evolve yet: no lens, no drafted spec, until it is fixed.
    if (node.hasError) continue;
    const name = def.childForFieldName('name')?.text;
    if (!name) continue;
    const params = (def.childForFieldName('parameters')?.namedChildren ?? [])
      .map((p) => (p?.type === 'identifier' ? p.text : p?.namedChildren.find((c) => c?.type === 'identifier')?.text))
      .filter((p): p is string => !!p);
    out.push(site(node, text, name, 'triton', def.childForFieldName('body'), params));
  }
  return out;
}

/** The function_declarator under a definition's declarator (through pointer / reference declarators). */
function functionDeclarator(node: Node | null): Node | null {
  let d = node;
  while (d && d.type !== 'function_declarator') d = d.childForFieldName('declarator');
  return d;
}

function insideExternC(node: Node): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === 'linkage_specification') return /"C"/.test(p.childForFieldName('value')?.text ?? '');
  }
  return false;
}

function cppKernels(root: Node, text: string): KernelSite[] {
  // A prototype `extern "C" void f(...);` makes a later plain definition of f a C-linkage kernel too.
  const declaredC = new Set<string>();
  for (const decl of root.descendantsOfType('declaration')) {
    if (!decl || !insideExternC(decl)) continue;
    const name = functionDeclarator(decl.childForFieldName('declarator'))?.childForFieldName('declarator')?.text;
    if (name) declaredC.add(name);
  }
  const out: KernelSite[] = [];
  for (const node of root.descendantsOfType('function_definition')) {
    if (!node) continue;
    const fd = functionDeclarator(node.childForFieldName('declarator'));
    const name = fd?.childForFieldName('declarator')?.text;
    if (!fd || !name) continue;
    const body = node.childForFieldName('body');
    const header = text.slice(node.startIndex, body ? body.startIndex : node.endIndex);
    // The C++ grammar does not know __global__; it is in the header text either way.
    const kind: KernelKind | undefined = /\b__global__\b/.test(header) ? 'cuda'
      : insideExternC(node) || declaredC.has(name) ? 'cpp' : undefined;
    if (!kind) continue;
    const params = (fd.childForFieldName('parameters')?.namedChildren ?? [])
      .map((p) => {
        let d = p?.childForFieldName('declarator') ?? null;
        while (d && d.type !== 'identifier' && d.childForFieldName('declarator')) d = d.childForFieldName('declarator');
        return d?.type === 'identifier' ? d.text : undefined;
      })
      .filter((p): p is string => !!p);
    // A kernel inside `extern "C" { ... }` starts at its own definition; `extern "C" void f() {}` at the extern.
    const outer = node.parent?.type === 'linkage_specification' ? node.parent : node;
    out.push(site(outer, text, name, kind, body, params));
  }
  return out;
}
