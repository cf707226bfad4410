import type { AbortLike } from '../core/abort.js';

/** Fires its `abort` listeners once, when `abort()` is called (the response closed before it was sent). */
export class ClientGone implements AbortLike {
  aborted = false;
  private listeners: (() => void)[] | undefined;

  addEventListener(type: 'abort', listener: () => void): void {
    if (type !== 'abort' || this.aborted) return;
    const list = (this.listeners ??= []);
    if (!list.includes(listener)) list.push(listener); // like EventTarget: the same listener once
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    const list = this.listeners;
    if (type !== 'abort' || !list) return;
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
  }

  /** Sets `aborted` and calls every listener once (each is removed first, as with `{ once: true }`). */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const list = this.listeners;
    this.listeners = undefined;
    for (const fn of list ?? []) {
      try {
        fn();
      } catch (err) {
        queueMicrotask(() => {
          throw err; // like EventTarget: a throwing listener neither stops the others nor is swallowed
        });
      }
    }
  }
}
