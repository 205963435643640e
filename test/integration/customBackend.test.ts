// The custom backend as a user of an in-house accelerator meets it, through the real CLI on the local host and
// the real harness: the example spec for simacc (the simulated accelerator of harness/tests/simacc, whose
// compiler builds C++ under another name and whose runtime launcher attaches the device) is evaluated, evolved
// by the tuner (whose first draft comes from the tune file in simacc's knowledge folder) and by the LLM operator
// (whose prompt carries simacc's note); a spec without the toolchain is refused with a sentence, and a host's
// config can name the toolchain instead.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, runCli } from '../support/sshCli';
import { ScriptedLlmServer } from '../support/scriptedLlmServer';

const ROOT = path.resolve(__dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'examples', 'custom', 'simacc_matmul');
const SPEC = path.join(EXAMPLE, 'spec.py');
const SIMACC = path.join(ROOT, 'harness', 'tests', 'simacc');
const FAST = `Rationale: i-k-j order over contiguous rows of B, as the simacc note says.

\`\`\`cpp
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
\`\`\``;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ke-custom-'));
let cli: string;
let server: ScriptedLlmServer;
beforeAll(async () => {
  cli = await bundleCli();
  server = new ScriptedLlmServer([], { fallback: { kind: 'answer', content: FAST } });
  await server.start();
});
afterAll(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The example spec without its TOOLCHAIN (and its SOURCE made absolute, since the copy lives elsewhere). */
function specWithoutToolchain(): string {
  const text = fs.readFileSync(SPEC, 'utf8');
  const start = text.indexOf('TOOLCHAIN = {');
  const end = text.indexOf('}\n', start) + 2;
  const p = path.join(dir, 'bare', 'spec.py');
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, (text.slice(0, start) + text.slice(end)).replace('SOURCE = "matmul.cpp"', `SOURCE = ${JSON.stringify(path.join(EXAMPLE, 'matmul.cpp'))}`));
  return p;
}

describe('the custom backend on the simulated accelerator simacc (real CLI, local host)', () => {
  it('evaluates a candidate built by the toolchain and run under its launcher', async () => {
    const r = await runCli(cli, ['evaluate', '--spec', SPEC, '--candidate', path.join(EXAMPLE, 'candidates', 'scratchpad_tiles.cpp'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout);
    expect(v.status).toBe('ok');
    expect(v.compile.compiler).toBe('simacc-cc');
    expect(v.speedup).toBeGreaterThan(1);
  });

  it('evolves with the tuner, whose first draft is the start from simacc\'s knowledge folder', async () => {
    const out = path.join(dir, 'tune');
    const r = await runCli(cli, ['evolve', '--spec', SPEC, '--operators', 'tune', '--budget', '4', '--json', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.baseline.status).toBe('ok');
    expect(result.best.status).toBe('ok');
    expect(result.best.operator).toBe('tune');
    expect(result.best.speedup).toBeGreaterThan(1);
    const first = JSON.parse(fs.readFileSync(path.join(out, 'candidates', 'c0001.json'), 'utf8'));
    const source = fs.readFileSync(path.join(out, 'candidates', 'c0001.cpp'), 'utf8');
    // knowledge/tune-simacc.json: {"block_m": 32, "block_n": 64, "block_k": 32}
    expect(source).toMatch(/constexpr int BLOCK_M = 32;/);
    expect(source).toMatch(/constexpr int BLOCK_N = 64;/);
    expect(source).toMatch(/constexpr int BLOCK_K = 32;/);
    // no host names its hardware: the toolchain's does
    expect(first.rationale).toMatch(/^known good for matmul on simacc: BLOCK_M 64→32/);
  });

  it('gives the LLM operator simacc\'s note in its prompt', async () => {
    const out = path.join(dir, 'llm');
    const r = await runCli(cli, ['evolve', '--spec', SPEC, '--operators', 'llm', '--model', 'm', '--budget', '1', '--json', '--out', out],
      { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: 'k' });
    expect(r.code, r.stderr).toBe(0);
    expect(server.userPrompt(0)).toContain('simacc: tiles that fit its scratchpad');
    expect(server.userPrompt(0)).toContain('C++ for an in-house accelerator');
    expect(JSON.parse(r.stdout).best.operator).toBe('llm');
  });

  it('refuses a custom spec without its toolchain with a sentence, and takes it from the host\'s config', async () => {
    const bare = specWithoutToolchain();
    const cand = path.join(EXAMPLE, 'candidates', 'scratchpad_tiles.cpp');
    const refused = await runCli(cli, ['evaluate', '--spec', bare, '--candidate', cand, '--json']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/BACKEND "custom" needs the toolchain's compile and run commands/);
    expect(refused.stderr).toMatch(/"toolchain" in the host's config/);

    const config = path.join(dir, 'hosts.json');
    fs.writeFileSync(config, JSON.stringify({ hosts: [{ name: 'local', type: 'local', hardware: 'simacc',
      toolchain: { compile: [path.join(SIMACC, 'simacc-cc'), '{source}', '-o', '{output}'], run: [path.join(SIMACC, 'simacc-run'), '--'] } }] }));
    const r = await runCli(cli, ['evaluate', '--spec', bare, '--candidate', cand, '--config', config, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'ok', compile: { compiler: 'simacc-cc' } });

    fs.writeFileSync(config, JSON.stringify({ hosts: [{ name: 'local', type: 'local', toolchain: { compile: 'simacc-cc {source}' } }] }));
    const bad = await runCli(cli, ['evaluate', '--spec', bare, '--candidate', cand, '--config', config, '--json']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/hosts\[0\]\.toolchain\.compile must be a command as a list of strings/);
  });
});
