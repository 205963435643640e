// A small base for things that own listeners and registrations: everything registered is disposed with it.
import type * as vscode from 'vscode';

export class DisposableStore implements vscode.Disposable {
  private readonly items: { dispose(): unknown }[] = [];
  private disposed = false;

  add<T extends { dispose(): unknown }>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  dispose(): void {
    this.disposed = true;
    for (const item of this.items.splice(0).reverse()) {
      try {
        item.dispose();
      } catch {
        // One failing disposal must not keep the rest alive.
      }
    }
  }
}
