// The scripted OpenAI-compatible server as a program, for benchmark runs where no test runner is at hand (the
// GPU machine has Node but not this repository's node_modules; scripts/build.mjs bundles this file). It serves
// hand-written KernelBench candidates: for each problem (a folder of candidates/<problem>/), the requests whose
// prompt names `<problem>.py` get that folder's files in name order, each as a fenced answer with its
// docstring as the rationale; the last file repeats. Prints {"baseURL": ...} on stdout; runs until killed.
//   node dist/scripted-llm-server.js CANDIDATES_DIR
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ScriptedLlmServer, type RecordedRequest, type ScriptStep } from './scriptedLlmServer';

interface Route {
  problem: string;
  answers: string[];
  next: number;
}

function answerOf(file: string): string {
  const code = fs.readFileSync(file, 'utf8');
  const doc = /^"""([\s\S]*?)"""/.exec(code)?.[1]?.replace(/\s+/g, ' ').trim() ?? 'a hand-written candidate.';
  return `Rationale: ${doc}\n\n\`\`\`python\n${code.trimEnd()}\n\`\`\`\n`;
}

function routes(dir: string): Route[] {
  return fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => ({
    problem: d.name,
    answers: fs.readdirSync(path.join(dir, d.name)).filter((f) => f.endsWith('.py')).sort().map((f) => answerOf(path.join(dir, d.name, f))),
    next: 0,
  })).filter((r) => r.answers.length);
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: scripted-llm-server CANDIDATES_DIR');
  const table = routes(dir);
  const pick = (req: RecordedRequest): ScriptStep => {
    const text = (req.body?.messages ?? []).map((m: { content?: string }) => m.content ?? '').join('\n');
    const route = table.find((r) => text.includes(`${r.problem}.py`));
    if (!route) return { kind: 'answer', content: 'No candidate is scripted for this problem.' };
    const answer = route.answers[Math.min(route.next, route.answers.length - 1)];
    route.next++;
    return { kind: 'answer', content: answer, promptTokens: Math.ceil(text.length / 4), completionTokens: Math.ceil(answer.length / 4) };
  };
  const server = new ScriptedLlmServer([], { fallback: pick });
  await server.start();
  process.stdout.write(JSON.stringify({ baseURL: server.baseURL, problems: table.map((r) => r.problem) }) + '\n');
  const stop = () => void server.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  process.stderr.write(`scripted-llm-server: ${(e as Error).message}\n`);
  process.exit(2);
});
