/**
 * What the routes need of an abort signal ("the client went away"): `aborted` and `abort` listeners. A real
 * `AbortSignal` is one; so is `ClientGone`, which the node adapter hands out instead of an `AbortController`
 * per request (its `EventTarget` set-up, and the add and remove of a listener per wait, were a visible share of
 * the per-request CPU).
 */
export interface AbortLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
