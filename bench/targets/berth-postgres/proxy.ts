/** A TCP round-robin balancer in front of replicas (what nginx/HAProxy would be): one backend per connection. */
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export async function roundRobin(ports: number[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(ports[next++ % ports.length]!, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
