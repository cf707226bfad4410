import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { refusal, type AllowableKind } from './address-policy.js';

export interface PostResult {
  status?: number;
  error?: string;
  /** The target is refused by the address policy: retrying cannot help. */
  refused?: boolean;
}

/** Most of a target's answer we read (the rest is dropped with the connection). */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * A DNS lookup that only returns addresses webhooks may dial: a name that resolves to a refused address fails
 * before any connection is made.
 */
function guardedLookup(allow: readonly AllowableKind[]): LookupFunction {
  return ((
    hostname: string,
    options: object,
    cb: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, '', 0);
      const ok = addresses.filter((a) => refusal(a.address, allow) === undefined);
      if (ok.length === 0) {
        const why =
          addresses.map((a) => refusal(a.address, allow)).find((r) => r !== undefined) ?? 'refused: no address';
        return cb(Object.assign(new Error(`${hostname}: ${why}`), { code: 'EREFUSEDADDRESS' }), '', 0);
      }
      if ((options as { all?: boolean }).all) cb(null, ok);
      else cb(null, ok[0]!.address, ok[0]!.family);
    });
  }) as LookupFunction;
}

/**
 * POSTs one webhook attempt: no redirects followed (a 3xx is just a status), bounded by `timeoutMs` from start
 * to answer. SSRF protection in three layers: an IP literal is checked before dialing; names resolve through
 * `guardedLookup`; and the socket's actual remote address is checked on connect (anything the lookup did not
 * see) before a byte is sent (the request is only written once that check passed).
 */
export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allow: readonly AllowableKind[] },
): Promise<PostResult> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (r: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return done({ error: 'invalid URL' });
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:')
      return done({ error: `unsupported scheme ${target.protocol}` });
    const literal = target.hostname.replace(/^\[(.*)\]$/, '$1');
    const early = isIP(literal) ? refusal(literal, opts.allow) : undefined; // an IP literal is refused before dialing
    if (early) return done({ error: early, refused: true });
    const options: RequestOptions = {
      method: 'POST',
      agent: false,
      lookup: guardedLookup(opts.allow),
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'berth-webhooks/1',
        ...headers,
      },
    };
    const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, options);
    timer = setTimeout(() => {
      req.destroy();
      done({ error: `timeout after ${opts.timeoutMs} ms` });
    }, opts.timeoutMs);
    req.on('socket', (socket: Socket) => {
      const check = () => {
        const why =
          socket.remoteAddress === undefined
            ? 'refused: unknown remote address'
            : refusal(socket.remoteAddress, opts.allow);
        if (why) {
          done({ error: why, refused: true });
          req.destroy();
        } else req.end(body); // nothing is written before the check
      };
      if (socket.remoteAddress !== undefined && !socket.connecting) check();
      else socket.once('connect', check);
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      done({ error: err.message || err.code || 'connection error', refused: err.code === 'EREFUSEDADDRESS' }),
    );
    req.on('response', (res) => {
      let read = 0;
      res.on('data', (c: Buffer) => {
        read += c.length;
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      res.on('end', () => done({ status: res.statusCode ?? 0 }));
      res.on('close', () => done({ status: res.statusCode ?? 0 }));
      res.on('error', () => done({ status: res.statusCode ?? 0 }));
    });
  });
}
