import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** What the proxy does to one HTTP request (chosen by `FaultProxy.pick` from the request's head). */
export type Fault =
  /** Answer it without forwarding, then close the connection. */
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body: string }
  /** Forward it, swallow the answer, close both sides: the request was served, the client never hears back. */
  | { kind: 'cut-answer' }
  /** Forward it and its answer until `events` SSE chunk events (`data: {"output"...`) went through, then swallow what comes next and close. */
  | { kind: 'cut-after-events'; events: number };

/**
 * A loopback TCP proxy in front of `berth dev` that breaks chosen HTTP requests the way networks do: an answer
 * from a balancer (429/503), an answer lost after the server acted on the request, a server-sent event stream
 * dropped mid-way with bytes in flight lost. Everything else passes through unchanged.
 */
export class FaultProxy implements AsyncDisposable {
  /** The head (request line and headers) of every request that reached the proxy, in order. */
  readonly heads: string[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  url = '';

  constructor(
    private readonly target: string,
    /** Called with each request's head; `undefined`: pass it through. */
    public pick: (head: string) => Fault | undefined = () => undefined,
  ) {}

  async listen(): Promise<this> {
    const t = new URL(this.target);
    this.server = createServer((client) => this.pipe(client, Number(t.port)));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Requests whose head matches. */
  count(re: RegExp): number {
    return this.heads.filter((h) => re.test(h)).length;
  }

  private pipe(client: Socket, port: number): void {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => {});
    }
    let fault: Fault | undefined;
    let seen = 0;
    const kill = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (data: Buffer) => {
      const text = data.toString('latin1');
      if (/^(GET|POST|PUT|DELETE|HEAD) /.test(text)) {
        const head = text.slice(0, text.indexOf('\r\n\r\n') + 1 || undefined);
        this.heads.push(head);
        fault = this.pick(head);
        seen = 0;
        if (fault?.kind === 'answer') {
          const headers = { 'content-type': 'application/json', connection: 'close', ...fault.headers };
          const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
          client.end(
            `HTTP/1.1 ${fault.status} X\r\n${lines.join('')}content-length: ${Buffer.byteLength(fault.body)}\r\n\r\n${fault.body}`,
          );
          upstream.destroy();
          return;
        }
      }
      if (fault?.kind !== 'answer') upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (fault?.kind === 'cut-answer') return kill();
      if (fault?.kind === 'cut-after-events') {
        if (seen >= fault.events) return kill(); // these bytes were in flight: lost
        seen += data.toString('utf8').match(/^data: \{"output"/gm)?.length ?? 0;
      }
      client.write(data);
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
