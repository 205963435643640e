// The webview's end of the protocol: typed commands and requests to the host, typed notifications from it.
import type { CommandType, Envelope, NotificationType, ParamsOf, RequestType, ResultOf } from '../protocol';
import { Ready } from '../protocol';

export interface HostApi {
  postMessage(message: unknown): void;
}

export class PanelClient {
  private nextId = 1;
  private readonly pending = new Map<number, (r: unknown) => void>();
  private readonly handlers = new Map<string, (p: unknown) => void>();

  constructor(private readonly host: HostApi, target: Pick<Window, 'addEventListener'> = window) {
    target.addEventListener('message', (e: Event) => this.receive((e as MessageEvent).data as Envelope));
  }

  /** Tells the host the panel can receive; the host answers with the full state. */
  ready(clientId: string): void {
    this.send(Ready, { clientId });
  }

  send<T extends CommandType<string, unknown>>(type: T, params: ParamsOf<T>): void {
    this.host.postMessage({ kind: 'command', method: type.method, params } satisfies Envelope);
  }

  request<T extends RequestType<string, unknown, unknown>>(type: T, params: ParamsOf<T>): Promise<ResultOf<T>> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve as (r: unknown) => void);
      this.host.postMessage({ kind: 'request', method: type.method, params, id } satisfies Envelope);
    });
  }

  on<T extends NotificationType<string, unknown>>(type: T, handler: (params: ParamsOf<T>) => void): void {
    this.handlers.set(type.method, handler as (p: unknown) => void);
  }

  private receive(msg: Envelope): void {
    if (!msg || typeof msg !== 'object') return;
    if (msg.kind === 'response') {
      this.pending.get(msg.id)?.(msg.result);
      this.pending.delete(msg.id);
    } else if (msg.kind === 'notification') {
      this.handlers.get(msg.method)?.(msg.params);
    }
  }
}
