// The engine finds functions with tree-sitter, whose grammars load asynchronously once per process: the
// product's entry points await them, and so does each test file, before it is even read (some compute
// their fixtures at module level).
import { KernelLocator } from '../../src/engine/kernelLocator';

await KernelLocator.get();
