// Which keys to offer a server, in OpenSSH's order: the agent's keys, then the identity files. Encrypted
// key files are unlocked through a passphrase callback, asked once per file and remembered.
import { promises as fs } from 'node:fs';
import type { AnyAuthMethod, AuthenticationType, AuthHandlerMiddleware, ParsedKey } from 'ssh2';
import { utils } from 'ssh2';
import type { SshTarget } from './sshConfigFile';

/** Asks for the passphrase of an encrypted key file; undefined means "skip this key". */
export type PassphrasePrompt = (keyFile: string) => Promise<string | undefined>;

export class SshKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SshKeyError';
  }
}

/** Parsed keys by file, kept across reconnects so a passphrase is asked once per session. */
export class IdentityCache {
  private readonly keys = new Map<string, ParsedKey | null>();

  async load(file: string, prompt?: PassphrasePrompt): Promise<ParsedKey | undefined> {
    if (this.keys.has(file)) return this.keys.get(file) ?? undefined;
    let data: Buffer;
    try {
      data = await fs.readFile(file);
    } catch {
      return undefined; // OpenSSH silently skips identity files that do not exist
    }
    let parsed = utils.parseKey(data);
    if (parsed instanceof Error && /passphrase/i.test(parsed.message)) {
      const passphrase = prompt ? await prompt(file) : undefined;
      if (passphrase === undefined) {
        this.keys.set(file, null);
        return undefined;
      }
      parsed = utils.parseKey(data, passphrase);
      if (parsed instanceof Error) {
        throw new SshKeyError(`The passphrase for ${file} is wrong (${parsed.message}). Give the right one, or load the key into ssh-agent.`);
      }
    }
    if (parsed instanceof Error) {
      throw new SshKeyError(`Cannot read the private key ${file}: ${parsed.message}. Point identityFile at an OpenSSH or PEM private key.`);
    }
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    this.keys.set(file, key);
    return key;
  }
}

/**
 * An ssh2 auth handler that offers the agent (unless IdentitiesOnly), then each identity file. Keys
 * are loaded lazily, so an encrypted key's passphrase is asked only when the agent did not get us in.
 */
export function authHandlerFor(target: SshTarget, cache: IdentityCache, prompt: PassphrasePrompt | undefined,
  onKeyError: (e: Error) => void): AuthHandlerMiddleware {
  const queue: (() => Promise<AnyAuthMethod | undefined>)[] = [];
  if (target.agent && !target.identitiesOnly) {
    queue.push(async () => ({ type: 'agent', username: target.user, agent: target.agent! }) as AnyAuthMethod);
  }
  for (const file of target.identityFiles) {
    queue.push(async () => {
      const key = await cache.load(file, prompt);
      return key ? ({ type: 'publickey', username: target.user, key } as AnyAuthMethod) : undefined;
    });
  }
  return (methodsLeft: AuthenticationType[], _partial: boolean, nextAuth) => {
    const next = nextAuth as unknown as (m: AnyAuthMethod | false) => void;
    const allowed = (t: string) => !methodsLeft || methodsLeft.includes(t as AuthenticationType) || (t === 'agent' && methodsLeft.includes('publickey'));
    const step = async (): Promise<void> => {
      const make = queue.shift();
      if (!make) return next(false);
      try {
        const method = await make();
        if (!method || !allowed(method.type)) return step();
        next(method);
      } catch (e) {
        onKeyError(e as Error);
        next(false);
      }
    };
    void step();
  };
}
