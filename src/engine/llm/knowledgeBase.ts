// The knowledge notes retrieved into prompts: markdown files under knowledge/ (and the user's own folders),
// chosen by the target's hardware, the spec's backend and the bottleneck class of the parent's profile.
// Retrieval is by folder and front matter rather than by embeddings: the notes are few and written for
// this purpose, and a user can predict which notes a prompt will carry.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface KnowledgeNote {
  /** Absolute path. */
  file: string;
  /** Folder relative to its root, `/`-separated ('' for the root). */
  folder: string;
  title: string;
  body: string;
  /** From front matter: words the hardware string must contain (overrides the folder's rule). */
  hardware?: string[];
  backend?: string[];
  bottleneck?: string[];
  /** A note from a folder the user added. */
  user: boolean;
}

export interface KnowledgeQuery {
  /** The host's `hardware` (e.g. `nvidia-h100`, `cpu-x86`); undefined when no host declares one. */
  hardware?: string;
  backend: string;
  /** `memory-bound` | `compute-bound` | `latency-bound` from the parent's profile. */
  bottleneck?: string;
  /** Upper bound on the notes' total text. Default 8000 characters. */
  maxChars?: number;
}

export interface ChosenNote extends KnowledgeNote {
  score: number;
  /** Why it was chosen, for the docs and for debugging a prompt. */
  why: string;
}

/** Hardware folders and the hardware strings that select them. */
const FAMILIES: Array<{ folder: string; vendor: string; re: RegExp }> = [
  { folder: 'nvidia/hopper', vendor: 'nvidia', re: /\b(h100|h200|h800|h20|gh200|hopper|sm_?90a?)\b/ },
  { folder: 'nvidia/ampere', vendor: 'nvidia', re: /\b(a100|a10g?|a30|a40|a800|a6000|rtx-?30\d0|ampere|sm_?8[067])\b/ },
  { folder: 'amd/cdna', vendor: 'amd', re: /\b(mi\d{2,3}[a-z]?|cdna\d?|gfx9\d\w*|instinct)\b/ },
  { folder: 'cpu/x86', vendor: 'cpu', re: /\b(cpu|x86|x86_64|x64|amd64|xeon|epyc|ryzen|intel)\b/ },
  { folder: 'mtia', vendor: 'mtia', re: /\bmtia/ },
];
const VENDORS: Record<string, RegExp> = { nvidia: /\b(nvidia|geforce|tesla|quadro|rtx)\b/, amd: /\b(amd|radeon|rocm)\b/ };

/** The hardware folders that apply, most specific first (e.g. `nvidia/hopper`, `nvidia`). */
export function hardwareFolders(hardware: string | undefined, backend: string): string[] {
  let hw = (hardware ?? '').toLowerCase();
  if (!hw) {
    // No host declared its hardware: the backend says where the kernel runs.
    if (backend === 'cpp') hw = process.arch === 'x64' ? 'cpu-x86' : 'cpu';
    else if (backend === 'triton' || backend === 'cuda') hw = 'nvidia';
    else if (backend === 'hip') hw = 'amd';
  }
  const out: string[] = [];
  for (const f of FAMILIES) {
    if (f.re.test(hw)) {
      out.push(f.folder);
      if (!out.includes(f.vendor)) out.push(f.vendor);
    }
  }
  for (const [vendor, re] of Object.entries(VENDORS)) if (re.test(hw) && !out.includes(vendor)) out.push(vendor);
  // Any folder named for one of the hardware string's words (a user's `acme-npu/` for `acme-npu-v2`).
  const words = hw.split(/[^a-z0-9_]+/).filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    for (let j = words.length; j > i; j--) {
      const w = words.slice(i, j).join('-');
      if (!out.includes(w)) out.push(w);
    }
  }
  return out;
}

/** Where the bundled notes live: the repo, the npm package or the VSIX (next to dist/). */
export function builtinKnowledgeDir(): string | undefined {
  const candidates = [
    process.env.KERNELEVOLVE_KNOWLEDGE_DIR,
    path.join(__dirname, '..', 'knowledge'), // dist/*.js
    path.join(__dirname, '..', '..', '..', 'knowledge'), // src/engine/llm/*.ts under vitest
  ].filter((p): p is string => !!p);
  return candidates.find((d) => fs.existsSync(path.join(d, 'README.md')) || fs.existsSync(path.join(d, 'bottleneck')));
}

function parseFrontMatter(text: string): { meta: Record<string, string>; body: string } {
  const m = /^---\s*\n([\s\S]*?)\n---\s*\n?/.exec(text);
  if (!m) return { meta: {}, body: text.trim() };
  const meta: Record<string, string> = {};
  for (const line of m[1].split('\n')) {
    const kv = /^\s*([A-Za-z_-]+)\s*:\s*(.*?)\s*(?:#.*)?$/.exec(line);
    if (kv) meta[kv[1].toLowerCase()] = kv[2];
  }
  return { meta, body: text.slice(m[0].length).trim() };
}

const list = (v: string | undefined) => (v ? v.split(/[,\s]+/).map((s) => s.trim().toLowerCase()).filter(Boolean) : undefined);

function readNotes(root: string, user: boolean): KnowledgeNote[] {
  const notes: KnowledgeNote[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && !e.name.startsWith('.')) walk(p);
      else if (e.isFile() && /\.md$/i.test(e.name) && !/^readme\.md$/i.test(e.name)) {
        const { meta, body } = parseFrontMatter(fs.readFileSync(p, 'utf8'));
        if (!body) continue;
        const heading = /^#\s+(.+)$/m.exec(body)?.[1];
        notes.push({
          file: p,
          folder: path.relative(root, dir).split(path.sep).join('/'),
          title: meta.title ?? heading ?? e.name.replace(/\.md$/i, ''),
          body,
          hardware: list(meta.hardware),
          backend: list(meta.backend),
          bottleneck: list(meta.bottleneck),
          user,
        });
      }
    }
  };
  walk(root);
  return notes;
}

export class KnowledgeBase {
  constructor(readonly notes: readonly KnowledgeNote[]) {}

  /**
   * The bundled notes plus the user's folders. A user folder that does not exist is reported through
   * `onWarning` (a typo in the config should not pass silently) and skipped.
   */
  static load(userFolders: string[] = [], opts: { builtinDir?: string | null; onWarning?: (m: string) => void } = {}): KnowledgeBase {
    const notes: KnowledgeNote[] = [];
    const builtin = opts.builtinDir === null ? undefined : opts.builtinDir ?? builtinKnowledgeDir();
    if (builtin) notes.push(...readNotes(builtin, false));
    for (const folder of userFolders) {
      if (!fs.existsSync(folder)) {
        opts.onWarning?.(`The knowledge folder ${folder} from the config does not exist; its notes are not used. Fix the path under "knowledge".`);
        continue;
      }
      notes.push(...readNotes(path.resolve(folder), true));
    }
    return new KnowledgeBase(notes);
  }

  /** The notes for one prompt, best first, within the character budget. */
  select(q: KnowledgeQuery): ChosenNote[] {
    const folders = hardwareFolders(q.hardware, q.backend);
    const hw = (q.hardware ?? folders[0] ?? '').toLowerCase();
    const bottleneck = q.bottleneck?.toLowerCase();
    const scored: ChosenNote[] = [];
    for (const n of this.notes) {
      if (n.backend && !n.backend.includes(q.backend.toLowerCase())) continue;
      const reasons: string[] = [];
      let score = 0;
      const inBottleneckFolder = n.folder === 'bottleneck' || n.folder.endsWith('/bottleneck');
      if (inBottleneckFolder || (n.bottleneck && !n.hardware && n.folder === '')) {
        // A bottleneck note is used only for its class.
        const classes = n.bottleneck ?? [path.basename(n.file, '.md').toLowerCase()];
        if (!bottleneck || !classes.includes(bottleneck)) continue;
        score += 3;
        reasons.push(`bottleneck ${bottleneck}`);
      } else if (n.hardware) {
        if (!n.hardware.some((w) => hw.includes(w))) continue;
        score += 3;
        reasons.push(`hardware matches ${n.hardware.join('/')}`);
      } else if (n.folder === '') {
        score += 1;
        reasons.push('general');
      } else {
        // A generation folder (nvidia/ampere) is not taken for its vendor's (nvidia): it must match itself.
        const family = FAMILIES.some((f) => f.folder === n.folder || n.folder.startsWith(f.folder + '/'));
        const rank = folders.findIndex((f) => n.folder === f || (n.folder.startsWith(f + '/') && (!family || f.includes('/'))));
        if (rank < 0) continue;
        score += Math.max(1, 4 - rank);
        reasons.push(`hardware folder ${n.folder}`);
      }
      if (n.bottleneck && bottleneck && n.bottleneck.includes(bottleneck) && !inBottleneckFolder) {
        score += 2;
        reasons.push(`bottleneck ${bottleneck}`);
      }
      if (n.backend) {
        score += 1;
        reasons.push(`backend ${q.backend}`);
      }
      if (n.user) {
        score += 0.5;
        reasons.push('user folder');
      }
      scored.push({ ...n, score, why: reasons.join(', ') });
    }
    scored.sort((a, b) => b.score - a.score || a.file.localeCompare(b.file));
    const budget = q.maxChars ?? 8000;
    const chosen: ChosenNote[] = [];
    let used = 0;
    for (const n of scored) {
      const size = n.body.length + n.title.length + 8;
      if (used + size <= budget) {
        chosen.push(n);
        used += size;
      } else if (!chosen.length) {
        chosen.push({ ...n, body: n.body.slice(0, Math.max(0, budget - n.title.length - 10)) + '…' });
        used = budget;
      }
    }
    return chosen;
  }
}
