/** What `sendCoalesced` needs of a `ws` WebSocket: `send`, and the stream under it (ws keeps it in `_socket`). */
export interface CoalescableSocket {
  send(data: string): void;
}
interface Corkable {
  cork(): void;
  uncork(): void;
}

const corked = new WeakSet<Corkable>();
const later: (fn: () => void) => void = (globalThis as { process?: { nextTick?: (fn: () => void) => void } }).process?.nextTick ?? queueMicrotask;

/**
 * Sends `data` as one WebSocket frame, with the TCP socket under it corked until the callbacks and promise
 * reactions of the current event-loop turn have run (`process.nextTick` runs after the microtask queue drains):
 * the frames sent in one turn (the assigns and acks of one group commit, the results of one batch of jobs) leave
 * in one `writev` instead of one each. Every frame keeps its order and content; only the syscalls are fewer.
 * Without a corkable socket (not `ws`, or not connected yet) it is a plain `send`.
 */
export function sendCoalesced(ws: CoalescableSocket, data: string): void {
  const socket = (ws as { _socket?: Partial<Corkable> | null })._socket;
  if (socket && typeof socket.cork === 'function' && typeof socket.uncork === 'function' && !corked.has(socket as Corkable)) {
    const s = socket as Corkable;
    s.cork();
    corked.add(s);
    later(() => {
      corked.delete(s);
      s.uncork();
    });
  }
  ws.send(data);
}
