import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a worker sent, reduced to its shape: method, operation, query keys, body keys. */
export interface RequestShape {
  method: string;
  /** `/v2/<ep>/<op>/<worker>[/<job>]` -> `<op>` plus `/<job>` when the path names a job. */
  op: string;
  endpoint: string;
  query: Record<string, string>;
  /** Top-level keys of a JSON body, with `status` kept as `status=<value>`. */
  body: string[] | undefined;
  auth: string | undefined;
}

/**
 * A loopback HTTP proxy in front of a control plane that records the shape of every worker-protocol request
 * passing through it (everything else is forwarded unrecorded).
 */
export class RecordingProxy {
  readonly shapes: RequestShape[] = [];
  private server: Server | undefined;
  url = '';

  constructor(private readonly target: string) {}

  async listen(): Promise<void> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const body = Buffer.concat(parts);
        this.record(req.method ?? 'GET', req.url ?? '/', body, req.headers.authorization);
        const up = request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (r) => {
            res.writeHead(r.statusCode ?? 502, r.headers);
            r.pipe(res);
          },
        );
        up.on('error', () => res.destroy());
        res.on('close', () => up.destroy());
        up.end(body);
      });
    });
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private record(method: string, rawUrl: string, body: Buffer, auth: string | undefined): void {
    const u = new URL(rawUrl, 'http://x');
    const p = u.pathname.split('/');
    if (p[1] !== 'v2' || !/^(job-|ping$)/.test(p[3] ?? '')) return;
    let keys: string[] | undefined;
    if (body.length > 0) {
      const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      keys = Object.keys(json)
        .map((k) => (k === 'status' ? `status=${String(json[k])}` : k))
        .sort();
    }
    this.shapes.push({
      method,
      op: p.length > 5 ? `${p[3]}/<job>` : p[3]!,
      endpoint: p[2]!,
      query: Object.fromEntries(u.searchParams),
      body: keys,
      auth,
    });
  }

  /** The distinct shapes of one endpoint's requests, as sorted strings (`query` keys only, plus `isStream`). */
  summary(endpoint: string): string[] {
    const out = new Set<string>();
    for (const s of this.shapes) {
      if (s.endpoint !== endpoint) continue;
      const q = Object.keys(s.query)
        .sort()
        .map((k) => (k === 'isStream' ? `isStream=${s.query[k]}` : k));
      out.add(`${s.method} ${s.op}?${q.join('&')}${s.body ? ` ${JSON.stringify(s.body)}` : ''}`);
    }
    return [...out].sort();
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
