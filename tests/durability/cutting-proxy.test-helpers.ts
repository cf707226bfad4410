import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A round-robin TCP balancer that cuts connections mid-request, as a flaky network or a balancer restart would:
 * of every three connections, one is cut as soon as the backend starts answering (the request was handled, the
 * answer is lost), one a moment after the request reached the backend (it may or may not have been handled),
 * and one passes. `cuts` counts the connections cut.
 */
export async function cuttingProxy(
  backends: number[],
): Promise<{ url: string; cuts: () => number; close(): Promise<void> }> {
  let n = 0;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const i = n++;
    const upstream = connect(backends[i % backends.length]!, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    const cut = () => {
      cuts++;
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (c: Buffer) => {
      upstream.write(c);
      if (i % 3 === 1) setTimeout(cut, 2);
    });
    upstream.on('data', (c: Buffer) => {
      if (i % 3 === 0) return cut();
      client.write(c);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cuts: () => cuts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
