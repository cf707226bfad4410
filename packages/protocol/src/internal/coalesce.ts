/** What `sendCoalesced` needs of a `ws` WebSocket: `send`, and the stream under it (ws keeps it in `_socket`). */
export interface CoalescableSocket {
  send(data: string): void;
}
interface Corkable {
  cork(): void;
  uncork(): void;
}

const corked = new WeakSet<Corkable>();
type Later = (fn: () => void) => unknown;
const g = globalThis as { setImmediate?: Later; process?: { nextTick?: Later } };
const later: Later = g.setImmediate ?? g.process?.nextTick ?? queueMicrotask;

/**
 * Sends `data` as one WebSocket frame, with the TCP socket under it corked until the I/O callbacks of the current
 * event-loop iteration have run (`setImmediate`: the check phase, right after the poll phase): the frames sent
 * while one batch of socket reads is handled (the assigns of the HTTP requests read in one poll, the acks of one
 * batch of results, the results of one batch of jobs, the assigns released by one group commit) leave in one
 * `writev` instead of one each. Uncorking on `process.nextTick` instead flushed after every single I/O callback,
 * i.e. one write per HTTP request's assign. Every frame keeps its order and content; only the syscalls are fewer.
 * Without a corkable socket (not `ws`, or not connected yet) it is a plain `send`.
 */
export function sendCoalesced(ws: CoalescableSocket, data: string): void {
  const socket = (ws as { _socket?: Partial<Corkable> | null })._socket;
  if (
    socket &&
    typeof socket.cork === 'function' &&
    typeof socket.uncork === 'function' &&
    !corked.has(socket as Corkable)
  ) {
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
