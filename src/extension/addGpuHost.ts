// "Add GPU Host", in the manner of Remote-SSH's "Add New SSH Host": pick a host of ~/.ssh/config or type
// `user@host[:port]` (or a whole ssh command), check it (what each backend needs and has), then write it to
// kernelEvolve.hosts in the User settings, keeping the hosts already there.
import * as vscode from 'vscode';
import { createHosts, type HostConfig } from '../remote/hostConfig';
import '../remote/hosts';
import { listSshConfigHosts } from '../remote/sshConfigFile';
import { parseSshDestination, sshHostEntry, uniqueHostName, type SshDestination } from './gpuHostEntry';
import { describeReadiness, hostReadiness } from './hostReadiness';
import type { HostOptions } from '../remote/hostConfig';

const TYPE_IT = '$(plus) Enter user@host[:port] or an ssh command…';

async function pickDestination(): Promise<{ dest: SshDestination; name: string } | undefined> {
  const known = await listSshConfigHosts().catch(() => []);
  const items: (vscode.QuickPickItem & { alias?: string })[] = [
    { label: TYPE_IT, alwaysShow: true },
    ...known.map((k) => ({ label: k.alias, description: [k.user, k.hostName].filter(Boolean).join('@') || undefined, detail: 'from ~/.ssh/config', alias: k.alias })),
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: 'KernelEvolve: Add GPU Host', placeHolder: known.length ? 'Pick a host from ~/.ssh/config, or enter one' : 'No hosts in ~/.ssh/config: enter one', ignoreFocusOut: true,
  });
  if (!picked) return undefined;
  if (picked.alias) return { dest: { host: picked.alias }, name: picked.alias };
  const typed = await vscode.window.showInputBox({
    title: 'KernelEvolve: Add GPU Host', prompt: 'The GPU machine, as you would reach it with ssh', placeHolder: 'me@gpu-box:22  or  ssh -p 2222 me@gpu-box', ignoreFocusOut: true,
    validateInput: (v) => (parseSshDestination(v) ? undefined : 'Write user@host, user@host:port, or an ssh command such as "ssh -p 2222 me@gpu-box".'),
  });
  const dest = typed ? parseSshDestination(typed) : undefined;
  return dest ? { dest, name: dest.host.split('.')[0] } : undefined;
}

/** Runs the flow; resolves with the entry written, or undefined when the user backed out. */
export async function addGpuHost(log: vscode.OutputChannel, hostOptions: HostOptions): Promise<HostConfig | undefined> {
  const picked = await pickDestination();
  if (!picked) return undefined;
  const settings = vscode.workspace.getConfiguration('kernelEvolve');
  const existing = (settings.inspect<HostConfig[]>('hosts')?.globalValue ?? []).filter((h) => h && typeof h === 'object');
  const entry = sshHostEntry(uniqueHostName(picked.name, existing.map((h) => h.name)), picked.dest);
  const [host] = createHosts({ hosts: [entry] }, [], hostOptions);
  let check;
  try {
    check = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `KernelEvolve: checking ${entry.host}…` }, () => host.check());
  } finally {
    await host.dispose();
  }
  log.appendLine(`Add GPU Host ${entry.name}: ${describeReadiness(check)} ${Object.entries(check.facts).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  const gpuReady = hostReadiness(check).filter((r) => r.backend !== 'cpp' && r.ready);
  if (!check.reachable || !gpuReady.length) {
    const why = check.reachable ? describeReadiness(check) : `${entry.host} could not be reached: ${check.error ?? 'no answer'}`;
    const answer = await vscode.window.showWarningMessage(`KernelEvolve: ${why}. Add it to kernelEvolve.hosts anyway?`, { modal: true }, 'Add Anyway');
    if (answer !== 'Add Anyway') return undefined;
  }
  // An empty list meant "this machine only"; it is replaced, since a run sends candidates to every host listed
  // and this machine is the one that could not judge the kernel.
  await settings.update('hosts', [...existing, entry], vscode.ConfigurationTarget.Global);
  const open = await vscode.window.showInformationMessage(`KernelEvolve: added ${entry.name} to kernelEvolve.hosts in your User settings. ${describeReadiness(check)}.`, 'Open Settings');
  if (open) await vscode.commands.executeCommand('workbench.action.openSettings', 'kernelEvolve.hosts');
  return entry;
}
