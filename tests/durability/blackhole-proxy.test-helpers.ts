import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy to a loopback port that can blackhole its live connections: bytes stop flowing both ways while the
 * sockets stay open (a half-open network path, as when a NAT or a cable drops), so only heartbeats can tell.
 * Connections made while blackholed are dead from the start too, until `heal()`.
 */
export class BlackholeProxy {
  private readonly pairs: { client: Socket; upstream: Socket; dead: boolean }[] = [];
  private cut = false;
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<BlackholeProxy> {
    let proxy!: BlackholeProxy;
    const server = createServer((client) => {
      const upstream = connect(targetPort, '127.0.0.1');
      const pair = { client, upstream, dead: proxy.cut };
      proxy.pairs.push(pair);
      client.on('data', (d) => {
        if (!pair.dead) upstream.write(d);
      });
      upstream.on('data', (d) => {
        if (!pair.dead) client.write(d);
      });
      const end = () => {
        if (pair.dead) return; // a blackholed path does not even carry the close
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end);
      upstream.on('close', end);
      client.on('error', () => {});
      upstream.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    proxy = new BlackholeProxy(server, (server.address() as AddressInfo).port);
    return proxy;
  }

  /** Forwards new connections again (connections cut so far stay dead). */
  heal(): void {
    this.cut = false;
  }

  /** Stops forwarding on every current and new connection, silently. */
  blackhole(): number {
    this.cut = true;
    const live = this.pairs.filter((p) => !p.dead);
    for (const p of live) p.dead = true;
    return live.length;
  }

  async close(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
