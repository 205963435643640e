// Prints the LLM operator's real prompts for one repair step and one improve step on the bundled CPU
// matmul: the harness judges the baseline and two variants (one that does not compile, one that is
// correct and faster) on this machine, and the prompt builder turns those verdicts into prompts.
//   node scripts/show-prompts.mjs            (needs g++ and python3 with numpy, like the harness)
import { build } from 'esbuild';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const entry = `
import { readFileSync } from 'node:fs';
import { loadSpec } from './src/engine/spec';
import { LocalHost } from './src/remote/localHost';
import { parseAnswer } from './src/engine/llm/answerParser';
import { KernelLocator } from './src/engine/kernelLocator';
import { KnowledgeBase } from './src/engine/llm/knowledgeBase';
import { buildPrompt } from './src/engine/llm/promptBuilder';
import { sourceHash, languageOf } from './src/engine/sourceText';

const BROKEN_ANSWER = \`Rationale: unroll the k loop by a compile-time factor so the compiler keeps several products in flight.

\\\`\\\`\\\`cpp
extern "C" void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M * N; ++i) C[i] = 0.0f;
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; k += UNROLL_K)
      for (int j = 0; j < N; ++j) C[i * N + j] += A[i * K + k] * B[k * N + j];
}
\\\`\\\`\\\`\`;

const FAST_ANSWER = \`Rationale: the two-column j blocks defeat vectorization and reload A for every pair of columns; an
i-k-j order with restrict pointers streams rows of B and C contiguously, so GCC vectorizes the inner loop.

\\\`\\\`\\\`cpp
extern "C" void matmul(const float* __restrict A, const float* __restrict B, float* __restrict C, int M, int N, int K) {
  for (int i = 0; i < M; ++i) {
    float* __restrict c = C + (long)i * N;
    for (int j = 0; j < N; ++j) c[j] = 0.0f;
    for (int k = 0; k < K; ++k) {
      const float a = A[(long)i * K + k];
      for (int j = 0; j < N; ++j) c[j] += a * B[(long)k * N + j];
    }
  }
}
\\\`\\\`\\\`\`;

export async function main() {
  await KernelLocator.get();
  const spec = await loadSpec('examples/cpp/matmul_blocked/spec.py');
  const baselineSource = readFileSync(spec.sourcePath, 'utf8');
  const specText = readFileSync(spec.specPath, 'utf8');
  const language = languageOf(spec.sourcePath);
  const host = new LocalHost({});
  const judge = async (id, source, parents, rationale, mode) => {
    const verdict = await host.evaluate({ id, specPath: spec.specPath, baselinePath: spec.sourcePath, candidateSource: source,
      candidateFileName: 'matmul.cpp', profile: true });
    return { id, parents, operator: parents.length ? 'llm' : 'baseline', mode, source, hash: sourceHash(source, language),
      state: 'done', verdict, rationale, timings: { proposedAt: Date.now() } };
  };
  const parse = (answer) => {
    const p = parseAnswer({ answer, parentSource: baselineSource, kernel: spec.kernel, language });
    if (!p.ok) throw new Error(p.reason);
    return p;
  };
  const baseline = await judge('c0000', baselineSource, [], 'the kernel as it stands', undefined);
  const b = parse(BROKEN_ANSWER);
  const broken = await judge('c0001', b.source, ['c0000'], b.rationale, 'improve');
  const f = parse(FAST_ANSWER);
  const fast = await judge('c0002', f.source, ['c0000'], f.rationale, 'improve');
  const candidates = [baseline, broken, fast];
  const kb = KnowledgeBase.load();
  const show = (title, parent) => {
    const notes = kb.select({ backend: spec.backend, bottleneck: parent.verdict?.profile?.bottleneck });
    const messages = buildPrompt({ mode: parent.verdict.status === 'ok' ? 'improve' : 'repair', spec, specText, language,
      baselineSource, candidates, parent, notes, pastWins: [] });
    const rel = (s) => s.split(process.cwd() + '/').join('').replace(/\\/tmp\\/kernelevolve\\/[^/\\s]+\\//g, '');
    process.stdout.write('=== ' + title + ' (parent ' + parent.id + ': ' + parent.verdict.status + ') ===\\n');
    for (const m of messages) process.stdout.write('--- ' + m.role + ' ---\\n' + rel(m.content) + '\\n');
    process.stdout.write('\\n');
  };
  process.stderr.write('verdicts: baseline ' + baseline.verdict.status + ', broken ' + broken.verdict.status + ', fast ' +
    fast.verdict.status + ' ' + (fast.verdict.speedup ?? 0).toFixed(2) + 'x\\n');
  show('REPAIR step', broken);
  show('IMPROVE step', fast);
  await host.dispose();
}
`;

const dir = mkdtempSync(path.join(tmpdir(), 'ke-prompts-'));
const outfile = path.join(dir, 'show-prompts.cjs');
await build({
  stdin: { contents: entry, resolveDir: root, sourcefile: 'show-prompts-entry.ts', loader: 'ts' },
  outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'error',
  external: ['cpu-features', './crypto/build/Release/sshcrypto.node'],
});
writeFileSync(path.join(dir, 'package.json'), '{"type": "commonjs"}');
process.chdir(root);
process.env.KERNELEVOLVE_HARNESS_DIR ??= path.join(root, 'harness');
process.env.KERNELEVOLVE_KNOWLEDGE_DIR ??= path.join(root, 'knowledge');
await createRequire(import.meta.url)(outfile).main();
