import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { sendCoalesced } from './coalesce.js';

type Counted = { _writev?: (...a: unknown[]) => void; _write: (...a: unknown[]) => void; writableCorked: number };

/** Counts the writes the TCP socket under `ws` hands to the kernel (one `_write` or `_writev` call each). */
function countWrites(ws: WebSocket): () => number {
  const sock = (ws as unknown as { _socket: Counted })._socket;
  let n = 0;
  for (const k of ['_write', '_writev'] as const) {
    const orig = sock[k];
    if (!orig) continue;
    sock[k] = function (this: unknown, ...a: unknown[]) {
      n++;
      return orig.apply(this, a);
    };
  }
  return () => n;
}

describe('sendCoalesced', () => {
  let wss: WebSocketServer | undefined;
  afterEach(() => new Promise<void>((r) => (wss ? wss.close(() => r()) : r())));

  async function pair(): Promise<{ client: WebSocket; received: string[] }> {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => wss!.once('listening', r));
    const received: string[] = [];
    wss.on('connection', (s) => s.on('message', (d) => received.push(String(d))));
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    await new Promise((r) => client.once('open', r));
    return { client, received };
  }

  it('sends the frames of one turn in one socket write, every frame intact and in order', async () => {
    const { client, received } = await pair();
    const writes = countWrites(client);
    for (let i = 0; i < 5; i++) sendCoalesced(client, `m${i}`);
    await Promise.resolve().then(() => sendCoalesced(client, 'm5')); // a promise reaction of the same turn joins
    expect(writes()).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(writes()).toBe(1);
    await expect.poll(() => received.length).toBe(6);
    expect(received).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    client.close();
  });

  it('joins the frames of separate callbacks of one event-loop iteration (two immediates of one check phase): one write', async () => {
    const { client, received } = await pair();
    const writes = countWrites(client);
    // Two immediates queued together always run in the same check phase; an uncork queued from the first runs in the
    // next one. (Two 1 ms timers were used before: under load their due times could fall in different iterations.)
    await new Promise<void>((resolve) => {
      setImmediate(() => sendCoalesced(client, 'a'));
      setImmediate(() => {
        sendCoalesced(client, 'b');
        resolve();
      });
    });
    await new Promise((r) => setImmediate(r));
    expect(writes()).toBe(1);
    await expect.poll(() => received.length).toBe(2);
    expect(received).toEqual(['a', 'b']);
    client.close();
  });

  it('plain ws.send costs one write per frame (what it replaces)', async () => {
    const { client, received } = await pair();
    const writes = countWrites(client);
    for (let i = 0; i < 5; i++) client.send(`m${i}`);
    expect(writes()).toBe(5);
    await expect.poll(() => received.length).toBe(5);
    client.close();
  });

  it('is a plain send on something that is not a corkable ws', () => {
    const sent: string[] = [];
    sendCoalesced({ send: (d: string) => void sent.push(d) }, 'x');
    expect(sent).toEqual(['x']);
  });
});
