// Read-only virtual documents for previews: `kernelevolve-candidate:/<runId>/<candidateId>/<file>` holds a
// candidate's whole source (c0000 is the baseline). The file on disk is never touched by a preview.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunManager } from './runManager';

export const CANDIDATE_SCHEME = 'kernelevolve-candidate';

export function candidateUri(runId: string, candidateId: string, sourcePath: string): vscode.Uri {
  return vscode.Uri.from({ scheme: CANDIDATE_SCHEME, path: `/${runId}/${candidateId}/${path.basename(sourcePath)}` });
}

export class CandidateDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly runs: RunManager) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    const [, runId, candidateId] = uri.path.split('/');
    const c = this.runs.get(runId)?.candidates.get(candidateId);
    if (!c) throw new Error(`KernelEvolve has no candidate ${candidateId} in run ${runId}; the run store may have been removed.`);
    return c.source;
  }
}
