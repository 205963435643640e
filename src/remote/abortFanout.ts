// One 'abort' listener per signal, however many jobs wait on it: a run's signal is shared by every job of a
// round (a confirmation's evaluations, a tune's wave on 20 slots), Node warns past ten listeners on one
// signal ("MaxListenersExceededWarning: Possible EventTarget memory leak detected"), and a listener left behind
// by a job that ended holds the job until the run ends.

export class AbortFanout {
  private readonly bySignal = new Map<AbortSignal, { callbacks: Set<() => void>; listener: () => void }>();

  /** Calls `callback` once when `signal` aborts; the function returned stops that (call it when the job ends). */
  on(signal: AbortSignal | undefined, callback: () => void): () => void {
    if (!signal) return () => undefined;
    let entry = this.bySignal.get(signal);
    if (!entry) {
      const callbacks = new Set<() => void>();
      const listener = () => {
        this.bySignal.delete(signal);
        for (const f of [...callbacks]) f();
      };
      entry = { callbacks, listener };
      this.bySignal.set(signal, entry);
      signal.addEventListener('abort', listener, { once: true });
    }
    const { callbacks } = entry;
    callbacks.add(callback);
    return () => {
      callbacks.delete(callback);
      const now = this.bySignal.get(signal);
      if (now && now.callbacks === callbacks && !callbacks.size) {
        signal.removeEventListener('abort', now.listener);
        this.bySignal.delete(signal);
      }
    };
  }
}
