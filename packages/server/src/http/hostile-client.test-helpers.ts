import { connect, type Socket } from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: Record<string, unknown> | undefined;
}

/** Sends raw bytes (or runs `send` on the socket) and reads the first HTTP response, bounded by `timeoutMs`. */
export function rawRequest(
  port: number,
  send: Buffer | ((s: Socket) => Promise<void>),
  opts: { head?: boolean; timeoutMs?: number } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `no complete response within ${opts.timeoutMs ?? 8000} ms; got ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`,
          ),
        ),
      opts.timeoutMs ?? 8000,
    );
    let done = false;
    function finish(err?: Error, reply?: RawReply) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      if (err) reject(err);
      else resolve(reply!);
    }
    const tryParse = (final: boolean) => {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0)
        return final
          ? finish(
              new Error(
                `connection closed without a response: ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`,
              ),
            )
          : undefined;
      const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const len = opts.head ? 0 : Number(headers['content-length'] ?? NaN);
      const body = buf.subarray(end + 4);
      if (Number.isNaN(len) ? !final : body.length < len) return;
      const text = body.subarray(0, Number.isNaN(len) ? body.length : len).toString('utf8');
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      finish(undefined, { status, headers, body: text, json });
    };
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      tryParse(false);
    });
    s.on('end', () => tryParse(true));
    s.on('close', () => tryParse(true));
    s.on('error', (e) => (buf.length ? tryParse(true) : finish(e)));
    s.once('connect', () => {
      if (typeof send === 'function') send(s).catch(() => {});
      else s.write(send);
    });
  });
}

/** A request as raw text: Host, Authorization (unless given), Content-Length of the body, Connection: close. */
export function raw(
  method: string,
  path: string,
  o: { body?: string | Buffer; headers?: string[]; auth?: string | null; length?: boolean } = {},
): Buffer {
  const body = o.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(o.body) ? o.body : Buffer.from(o.body, 'utf8');
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  if (o.auth !== null) lines.push(`Authorization: ${o.auth ?? 'Bearer test-key'}`);
  if (o.length !== false && (o.body !== undefined || method === 'POST')) lines.push(`Content-Length: ${body.length}`);
  lines.push('Connection: close', ...(o.headers ?? []));
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
