// Finds the functions and the kernels of a source file with tree-sitter: every `def`/`class` (Python) or
// function definition (C++ grammar, which also reads CUDA), and among them the kernels: `@triton.jit`
// functions, CUDA `__global__` functions and extern "C" C++ functions. The one way the engine (splicing, the
// tuner, the LLM answer parser), the CLI and the editor find a function in a file: a parser, not patterns,
// so braces or `def` in strings and comments, decorators with arguments, templates and `extern "C"` blocks
// are read as the compiler reads them.
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

/** Where a function definition sits in a file: [start, end) covers decorators, template head or extern "C" to the body's end. */
export interface FunctionSpan {
  name: string;
  start: number;
  end: number;
  /** Leading whitespace of the definition's first line. */
  indent: string;
  /** Not inside another function or class (Python), nor in a function body or class (C++): file, namespace or extern "C" scope. */
  topLevel: boolean;
  /** Python: a `class` rather than a `def`. */
  isClass: boolean;
  /** C++: defined inside `extern "C"` (a block or a prefix). */
  cLinkage: boolean;
  /** The definition and the statement before it parse without error (prose or broken code running into it does not). */
  wellFormed: boolean;
}

export class KernelLocator {
  private static instance: Promise<KernelLocator> | undefined;
  private static ready: KernelLocator | undefined;

  private constructor(private readonly parsers: Record<GrammarName, Parser>) {}

  /** One locator per process: loading the grammars takes a few hundred milliseconds. */
  static get(): Promise<KernelLocator> {
    KernelLocator.instance ??= KernelLocator.load().catch((e) => {
      KernelLocator.instance = undefined;
      throw e;
    });
    return KernelLocator.instance;
  }

  /**
   * The locator once `get()` has loaded it, for code that must stay synchronous (splicing, the tuner, the
   * answer parser); their asynchronous entry points (starting a run, an operator's proposals) await `get()`.
   */
  static loaded(): KernelLocator {
    if (!KernelLocator.ready) throw new Error('The tree-sitter grammars are not loaded yet: await KernelLocator.get() before finding functions.');
    return KernelLocator.ready;
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
    KernelLocator.ready = new KernelLocator({ python: await make('tree-sitter-python.wasm'), cpp: await make('tree-sitter-cpp.wasm') });
    return KernelLocator.ready;
  }

  /** Every kernel of the text, in source order. */
  find(text: string, grammar: GrammarName): KernelSite[] {
    return this.readDefinitions(text, grammar, (root) => (grammar === 'python' ? tritonKernels(root, text) : cppKernels(root, text)));
  }

  /** Every function definition of the text, in source order (nested ones too; `topLevel` tells them apart). */
  functions(text: string, grammar: GrammarName): FunctionSpan[] {
    return this.readDefinitions(text, grammar, (root) => (grammar === 'python' ? pythonFunctions(root, text) : cppFunctions(root, text)));
  }

  /** Parses for definitions: CUDA's qualifiers read as blanks, so the C++ grammar sees plain C++ (offsets unchanged). */
  private readDefinitions<T>(text: string, grammar: GrammarName, read: (root: Node) => T[]): T[] {
    return this.withTree(grammar === 'cpp' ? blankCudaQualifiers(text) : text, grammar, read) ?? [];
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

// The C++ grammar does not know CUDA's function qualifiers: `__global__ void __launch_bounds__(256) k(...)`
// parses with errors that can swallow the text before it (prose around an answer's code, say).
const CUDA_QUALIFIER = /\b(?:__global__|__device__|__host__|__forceinline__|__noinline__)\b|\b__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)/g;
const CUDA_QUALIFIER_BEFORE = /(?:\b__global__|\b__device__|\b__host__|\b__forceinline__|\b__noinline__|\b__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\))$/;

function blankCudaQualifiers(text: string): string {
  return text.replace(CUDA_QUALIFIER, (q) => q.replace(/[^\n]/g, ' '));
}

/** A definition's start moved back over the CUDA qualifiers that were blanked for parsing (`__global__ void f` starts at `__global__`). */
function withQualifiers(text: string, start: number): number {
  let s = start;
  for (;;) {
    let k = s;
    while (k > 0 && /\s/.test(text[k - 1])) k--;
    const q = CUDA_QUALIFIER_BEFORE.exec(text.slice(Math.max(0, k - 200), k));
    if (!q) return s;
    s = k - q[0].length;
  }
}

function indentBefore(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))![0];
}

function span(start: number, outer: Node, text: string, name: string, topLevel: boolean, isClass: boolean, cLinkage: boolean): FunctionSpan {
  const wellFormed = !outer.hasError && !outer.previousSibling?.hasError;
  return { name, start, end: outer.endIndex, indent: indentBefore(text, start), topLevel, isClass, cLinkage, wellFormed };
}

function pythonFunctions(root: Node, text: string): FunctionSpan[] {
  const out: FunctionSpan[] = [];
  for (const node of root.descendantsOfType(['function_definition', 'class_definition'])) {
    const name = node?.childForFieldName('name')?.text;
    if (!node || !name) continue;
    const outer = node.parent?.type === 'decorated_definition' ? node.parent : node;
    let topLevel = true;
    for (let p = outer.parent; p && topLevel; p = p.parent) topLevel = p.type !== 'function_definition' && p.type !== 'class_definition';
    out.push(span(outer.startIndex, outer, text, name, topLevel, node.type === 'class_definition', false));
  }
  return out;
}

/** A declarator's own name: `f` of `A::f`, `operator+`, `~A`. */
function declaredName(declarator: Node | null): string | undefined {
  let d = declarator;
  while (d?.type === 'qualified_identifier') d = d.childForFieldName('name');
  return d?.text;
}

function cppFunctions(root: Node, text: string): FunctionSpan[] {
  const out: FunctionSpan[] = [];
  for (const node of root.descendantsOfType('function_definition')) {
    if (!node) continue;
    const name = declaredName(functionDeclarator(node.childForFieldName('declarator'))?.childForFieldName('declarator') ?? null);
    if (!name) continue;
    let topLevel = true;
    let local = false;
    for (let p = node.parent; p; p = p.parent) {
      if (p.type === 'compound_statement') local = true;
      if (p.type === 'field_declaration_list') topLevel = false;
    }
    // a class defined inside a function body: its methods are not the file's functions
    if (local) continue;
    // `extern "C" void f() {}` and `template <...>` heads belong to the definition
    let outer: Node = node;
    while (outer.parent && (outer.parent.type === 'template_declaration'
      || (outer.parent.type === 'linkage_specification' && outer.parent.childForFieldName('body')?.id === outer.id))) outer = outer.parent;
    out.push(span(withQualifiers(text, outer.startIndex), outer, text, name, topLevel, false, insideExternC(node)));
  }
  return out;
}

function site(node: Node, text: string, name: string, kind: KernelKind, body: Node | null, params: string[], start = node.startIndex): KernelSite {
  const end = node.endIndex;
  const header = text.slice(start, body ? body.startIndex : end).trim();
  return {
    name, kind, start, end,
    startLine: text.slice(0, start).split('\n').length - 1,
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
    const header = text.slice(withQualifiers(text, node.startIndex), body ? body.startIndex : node.endIndex);
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
    out.push(site(outer, text, name, kind, body, params, withQualifiers(text, outer.startIndex)));
  }
  return out;
}
