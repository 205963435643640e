// Knowledge retrieval over the notes shipped in knowledge/ and a user's folders.
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hardwareFolders, KnowledgeBase } from '../../src/engine/llm/knowledgeBase';
import { tempFolder } from '../support/tempFolders';

const kb = KnowledgeBase.load();
const files = (notes: { file: string }[]) => notes.map((n) => path.relative(path.resolve(__dirname, '../../knowledge'), n.file));

describe('knowledge retrieval', () => {
  it('finds the bundled notes', () => {
    expect(kb.notes.length).toBeGreaterThanOrEqual(8);
    expect(kb.notes.some((n) => /readme/i.test(n.file))).toBe(false);
  });

  it('maps hardware strings to folders, most specific first', () => {
    expect(hardwareFolders('nvidia-h100', 'triton').slice(0, 2)).toEqual(['nvidia/hopper', 'nvidia']);
    expect(hardwareFolders('a100-80gb', 'cuda').slice(0, 2)).toEqual(['nvidia/ampere', 'nvidia']);
    expect(hardwareFolders('amd-mi300x', 'triton').slice(0, 2)).toEqual(['amd/cdna', 'amd']);
    expect(hardwareFolders('mtia-v2', 'triton')[0]).toBe('mtia');
    expect(hardwareFolders(undefined, 'cpp')[0]).toMatch(/^cpu/);
  });

  it('picks Hopper and Triton notes and the memory-bound note for a memory-bound Triton kernel on an H100', () => {
    const chosen = files(kb.select({ hardware: 'nvidia-h100', backend: 'triton', bottleneck: 'memory-bound' }));
    expect(chosen).toEqual(expect.arrayContaining(['nvidia/hopper/hopper.md', 'nvidia/hopper/triton-hopper.md', 'bottleneck/memory-bound.md']));
    expect(chosen.some((f) => f.startsWith('nvidia/ampere') || f.startsWith('amd') || f.startsWith('cpu'))).toBe(false);
    expect(chosen).not.toContain('bottleneck/compute-bound.md');
  });

  it('leaves out notes for another backend and another bottleneck', () => {
    const chosen = files(kb.select({ hardware: 'nvidia-h200', backend: 'cuda', bottleneck: 'compute-bound' }));
    expect(chosen).toContain('bottleneck/compute-bound.md');
    expect(chosen).not.toContain('nvidia/hopper/triton-hopper.md');
    expect(chosen).not.toContain('bottleneck/memory-bound.md');
  });

  it('picks the x86 C++ note for a C++ kernel on a host that declares no hardware', () => {
    const chosen = files(kb.select({ backend: 'cpp', bottleneck: 'latency-bound' }));
    expect(chosen[0]).toBe('cpu/x86/cpp-x86.md');
    expect(chosen).toContain('bottleneck/latency-bound.md');
    expect(chosen.some((f) => f.startsWith('nvidia'))).toBe(false);
  });

  it('adds a user folder: notes named for the accelerator, narrowed by front matter', () => {
    const dir = tempFolder('ke-notes-');
    mkdirSync(path.join(dir, 'acme-npu'));
    writeFileSync(path.join(dir, 'acme-npu', 'tiles.md'), '# ACME tiles\nScratchpad is 256 KB; tile 128x128.');
    writeFileSync(path.join(dir, 'mtia-gemm.md'), '---\ntitle: MTIA GEMM\nhardware: mtia\nbackend: triton\n---\nUse 64x64 tiles on the PE grid.');
    writeFileSync(path.join(dir, 'team.md'), '# Team rules\nAlways keep fp32 accumulation.');
    const warnings: string[] = [];
    const user = KnowledgeBase.load([dir, path.join(dir, 'missing')], { onWarning: (m) => warnings.push(m) });
    expect(warnings[0]).toMatch(/missing from the config does not exist/);
    const titles = (q: Parameters<KnowledgeBase['select']>[0]) => user.select(q).map((n) => n.title);
    expect(titles({ hardware: 'acme-npu-v2', backend: 'custom' })).toEqual(expect.arrayContaining(['ACME tiles', 'Team rules']));
    expect(titles({ hardware: 'acme-npu-v2', backend: 'custom' })).not.toContain('MTIA GEMM');
    expect(titles({ hardware: 'mtia-v2', backend: 'triton' })[0]).toBe('MTIA GEMM');
    expect(titles({ hardware: 'nvidia-h100', backend: 'triton' })).not.toContain('ACME tiles');
  });

  it('keeps to the character budget', () => {
    const chosen = kb.select({ hardware: 'nvidia-h100', backend: 'triton', bottleneck: 'memory-bound', maxChars: 3000 });
    expect(chosen.reduce((n, c) => n + c.body.length, 0)).toBeLessThanOrEqual(3000);
    expect(chosen.length).toBeGreaterThanOrEqual(1);
  });
});
