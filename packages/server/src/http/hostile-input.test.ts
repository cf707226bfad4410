import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ScriptedWorker, call, listening, untilStatus } from '../testing.test-helpers.js';
import { pause, raw, rawRequest } from './hostile-client.test-helpers.js';
import type { Socket } from 'node:net';

/** Raw bytes, or a client that writes to the socket over time. */
type Send = Buffer | { stream: (s: Socket) => Promise<void> };
/** One hostile request: what is sent and the documented answer (status and `code`; 200 where it is legitimately accepted). */
interface Case {
  name: string;
  send: Send | ((jobId: string) => Send);
  status: number;
  code?: string;
  head?: boolean;
}

const post = (path: string, body: string | Buffer, headers: string[] = []) => raw('POST', path, { body, headers });
const run = (body: string | Buffer, headers: string[] = []) => post('/v2/echo/run', body, headers);
const get = (path: string, o: Parameters<typeof raw>[2] = {}) => raw('GET', path, o);
const nested = (n: number) => `{"input": ${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`;

const CASES: Case[] = [
  // --- bad JSON: 400 invalid_json
  { name: 'truncated JSON', send: run('{'), status: 400, code: 'invalid_json' },
  { name: 'missing value', send: run('{"input": }'), status: 400, code: 'invalid_json' },
  { name: 'not JSON at all', send: run('not json'), status: 400, code: 'invalid_json' },
  { name: 'empty body', send: run(''), status: 400, code: 'invalid_json' },
  { name: 'whitespace body', send: run(' \n\t '), status: 400, code: 'invalid_json' },
  { name: 'trailing comma', send: run('{"input": {"a": 1},}'), status: 400, code: 'invalid_json' },
  { name: 'single quotes', send: run("{'input': {}}"), status: 400, code: 'invalid_json' },
  { name: 'NaN literal', send: run('{"input": {"x": NaN}}'), status: 400, code: 'invalid_json' },
  { name: 'comment after JSON', send: run('{"input": {}} // hi'), status: 400, code: 'invalid_json' },
  { name: 'two JSON documents', send: run('{"input": {}}{"input": {}}'), status: 400, code: 'invalid_json' },
  {
    name: 'invalid UTF-8 bytes',
    send: run(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
    status: 400,
    code: 'invalid_json',
  },
  { name: 'UTF-8 BOM before JSON (skipped, like any UTF-8 decoder)', send: run('\ufeff{"input": {}}'), status: 200 },
  {
    name: 'UTF-16 body',
    send: run(Buffer.from('{"input": {}}', 'utf16le'), ['Content-Type: application/json; charset=utf-16']),
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'arrays nested 100 deep',
    send: run(`${'['.repeat(100)}${']'.repeat(100)}`),
    status: 400,
    code: 'invalid_json',
  },
  { name: 'objects nested 65 deep inside input', send: run(nested(65)), status: 400, code: 'invalid_json' },
  { name: '100k unclosed brackets', send: run('['.repeat(100_000)), status: 400, code: 'invalid_json' },
  {
    name: 'gzip body without decoding support',
    send: run(gzipSync('{"input": {}}'), ['Content-Encoding: gzip']),
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'form-encoded body',
    send: run('input=1&x=2', ['Content-Type: application/x-www-form-urlencoded']),
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'multipart body',
    send: run('--b\r\nContent-Disposition: form-data; name="input"\r\n\r\n{}\r\n--b--', [
      'Content-Type: multipart/form-data; boundary=b',
    ]),
    status: 400,
    code: 'invalid_json',
  },
  // --- wrong types: 400 invalid_request
  { name: 'top-level array', send: run('[]'), status: 400, code: 'invalid_request' },
  { name: 'top-level string', send: run('"input"'), status: 400, code: 'invalid_request' },
  { name: 'top-level number', send: run('42'), status: 400, code: 'invalid_request' },
  { name: 'top-level null', send: run('null'), status: 400, code: 'invalid_request' },
  { name: 'input missing', send: run('{}'), status: 400, code: 'invalid_request' },
  { name: 'input null', send: run('{"input": null}'), status: 400, code: 'invalid_request' },
  { name: 'input array', send: run('{"input": [1, 2]}'), status: 400, code: 'invalid_request' },
  { name: 'input string', send: run('{"input": "x"}'), status: 400, code: 'invalid_request' },
  { name: 'webhook a number', send: run('{"input": {}, "webhook": 5}'), status: 400, code: 'invalid_request' },
  {
    name: 'webhook ftp URL',
    send: run('{"input": {}, "webhook": "ftp://example.org/x"}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'webhook javascript: URL',
    send: run('{"input": {}, "webhook": "javascript:alert(1)"}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'webhook not a URL',
    send: run('{"input": {}, "webhook": "http//nope"}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'ttl as a string',
    send: run('{"input": {}, "policy": {"ttl": "60000"}}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'negative executionTimeout',
    send: run('{"input": {}, "policy": {"executionTimeout": -1}}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'ttl 1e400 (Infinity)',
    send: run('{"input": {}, "policy": {"ttl": 1e400}}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'ttl with 23 digits',
    send: run('{"input": {}, "policy": {"ttl": 99999999999999999999999}}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'lowPriority a string',
    send: run('{"input": {}, "policy": {"lowPriority": "yes"}}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'unknown policy key',
    send: run('{"input": {}, "policy": {"priority": 1}}'),
    status: 400,
    code: 'invalid_request',
  },
  { name: 'policy an array', send: run('{"input": {}, "policy": []}'), status: 400, code: 'invalid_request' },
  {
    name: 'incomplete s3Config',
    send: run('{"input": {}, "s3Config": {"accessId": "a"}}'),
    status: 400,
    code: 'invalid_request',
  },
  // --- prototype keys: accepted as plain data, nothing polluted (checked after the table)
  { name: '__proto__ at top level', send: run('{"__proto__": {"polluted": true}, "input": {}}'), status: 200 },
  { name: '__proto__ inside input', send: run('{"input": {"__proto__": {"polluted": true}}}'), status: 200 },
  {
    name: 'constructor.prototype at top level',
    send: run('{"constructor": {"prototype": {"polluted": true}}, "input": {}}'),
    status: 200,
  },
  {
    name: '__proto__ inside policy (unknown key)',
    send: run('{"input": {}, "policy": {"__proto__": {"ttl": 1}}}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'number 1e999 inside input (Infinity)',
    send: run('{"input": {"a": 1e999}}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'number -1e400 in an array inside input',
    send: run('{"input": {"b": [1, -1e400]}}'),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'integer of 400 digits inside input',
    send: run(`{"input": {"c": ${'9'.repeat(400)}}}`),
    status: 400,
    code: 'invalid_request',
  },
  {
    name: 'huge numbers inside input are data',
    send: run('{"input": {"n": 1e308, "m": 123456789012345678901234567890, "z": -0}}'),
    status: 200,
  },
  { name: 'lone surrogate escape inside input', send: run('{"input": {"s": "\\ud800"}}'), status: 200 },
  // --- oversized bodies: 413 payload_too_large
  {
    name: 'declared 11 MB on /run',
    send: raw('POST', '/v2/echo/run', { headers: [`Content-Length: ${11 * 1024 * 1024}`], length: false }),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'declared 21 MB on /runsync',
    send: raw('POST', '/v2/echo/runsync', { headers: [`Content-Length: ${21 * 1024 * 1024}`], length: false }),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: '10 MB + 1 chunked, no Content-Length',
    send: chunked('/v2/echo/run', 10 * 1024 * 1024 + 1),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: '100 KB on /status (64 KB limit)',
    send: (id) => post(`/v2/echo/status/${id}`, 'x'.repeat(100 * 1024)),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: '100 KB chunked on /cancel, no Content-Length',
    send: (id) => chunked(`/v2/echo/cancel/${id}`, 100 * 1024),
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'Content-Length shorter than the body',
    send: raw('POST', '/v2/echo/run', { body: '{"input": {}}', headers: ['Content-Length: 5'], length: false }),
    status: 400,
    code: 'invalid_json',
  },
  // --- HTTP framing tricks: 400 bad_http_request, 431 headers_too_large
  {
    name: 'non-numeric Content-Length',
    send: raw('POST', '/v2/echo/run', { body: '{}', headers: ['Content-Length: abc'], length: false }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'negative Content-Length',
    send: raw('POST', '/v2/echo/run', { body: '{}', headers: ['Content-Length: -1'], length: false }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'two different Content-Lengths',
    send: raw('POST', '/v2/echo/run', {
      body: '{"input":{}}',
      headers: ['Content-Length: 12', 'Content-Length: 3'],
      length: false,
    }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'Content-Length with Transfer-Encoding (smuggling)',
    send: raw('POST', '/v2/echo/run', {
      body: '0\r\n\r\n',
      headers: ['Content-Length: 5', 'Transfer-Encoding: chunked'],
      length: false,
    }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'unknown Transfer-Encoding',
    send: raw('POST', '/v2/echo/run', { body: '{}', headers: ['Transfer-Encoding: bogus'], length: false }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'bad chunk size',
    send: raw('POST', '/v2/echo/run', {
      body: 'zz\r\n{}\r\n0\r\n\r\n',
      headers: ['Transfer-Encoding: chunked'],
      length: false,
    }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'NUL byte in a header value',
    send: get('/v2/echo/health', { headers: ['X-Evil: a\u0000b'] }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'header line without a colon',
    send: get('/v2/echo/health', { headers: ['NoColonHere'] }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'space before the header colon',
    send: get('/v2/echo/health', { headers: ['X-Evil : 1'] }),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'no Host header',
    send: Buffer.from('GET /v2/echo/health HTTP/1.1\r\nAuthorization: Bearer test-key\r\nConnection: close\r\n\r\n'),
    status: 400,
    code: 'bad_http_request',
  },
  { name: 'unknown method token', send: raw('FOO', '/v2/echo/health'), status: 400, code: 'bad_http_request' },
  {
    name: 'HTTP/9.9',
    send: Buffer.from('GET /v2/echo/health HTTP/9.9\r\nHost: x\r\n\r\n'),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: 'raw 0xff bytes in the path',
    send: Buffer.concat([
      Buffer.from('GET /v2/echo/status/'),
      Buffer.from([0xff, 0x00]),
      Buffer.from(' HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-key\r\n\r\n'),
    ]),
    status: 400,
    code: 'bad_http_request',
  },
  {
    name: '20 KB of headers',
    send: get('/v2/echo/health', { headers: [`X-Big: ${'a'.repeat(20 * 1024)}`] }),
    status: 431,
    code: 'headers_too_large',
  },
  {
    name: '20 KB Authorization header',
    send: get('/v2/echo/health', { auth: `Bearer ${'k'.repeat(20 * 1024)}` }),
    status: 431,
    code: 'headers_too_large',
  },
  // --- slow clients: 408 request_timeout; slow but steady is fine
  { name: 'slow but steady body', send: slowly(run('{"input": {"slow": true}}'), 12, 40), status: 200 },
  {
    name: 'body that stalls',
    send: stall(raw('POST', '/v2/echo/run', { headers: ['Content-Length: 100'], length: false }), '{"input"'),
    status: 408,
    code: 'request_timeout',
  },
  {
    name: 'headers that stall (slowloris)',
    send: stall(Buffer.from('GET /v2/echo/health HTTP/1.1\r\nHost: x\r\n'), 'X-A: 1\r\n'),
    status: 408,
    code: 'request_timeout',
  },
  // --- wrong methods: 405 method_not_allowed
  { name: 'GET /run', send: get('/v2/echo/run'), status: 405, code: 'method_not_allowed' },
  {
    name: 'PUT /run',
    send: raw('PUT', '/v2/echo/run', { body: '{"input":{}}' }),
    status: 405,
    code: 'method_not_allowed',
  },
  { name: 'GET /runsync', send: get('/v2/echo/runsync'), status: 405, code: 'method_not_allowed' },
  {
    name: 'DELETE /status/<id>',
    send: (id) => raw('DELETE', `/v2/echo/status/${id}`),
    status: 405,
    code: 'method_not_allowed',
  },
  {
    name: 'PATCH /cancel/<id>',
    send: (id) => raw('PATCH', `/v2/echo/cancel/${id}`, { body: '{}' }),
    status: 405,
    code: 'method_not_allowed',
  },
  { name: 'GET /cancel/<id>', send: (id) => get(`/v2/echo/cancel/${id}`), status: 405, code: 'method_not_allowed' },
  { name: 'GET /purge-queue', send: get('/v2/echo/purge-queue'), status: 405, code: 'method_not_allowed' },
  { name: 'POST /health', send: post('/v2/echo/health', ''), status: 405, code: 'method_not_allowed' },
  { name: 'OPTIONS /run', send: raw('OPTIONS', '/v2/echo/run'), status: 405, code: 'method_not_allowed' },
  { name: 'HEAD /health', send: raw('HEAD', '/v2/echo/health'), status: 405, head: true },
  // --- bad ids and routes: 404 with the right code
  { name: 'empty job id', send: get('/v2/echo/status/'), status: 404, code: 'route_not_found' },
  { name: 'unknown job id', send: get('/v2/echo/status/nope'), status: 404, code: 'job_not_found' },
  {
    name: 'extra path segment',
    send: (id) => get(`/v2/echo/status/${id}/extra`),
    status: 404,
    code: 'route_not_found',
  },
  {
    name: 'encoded path traversal id',
    send: get('/v2/echo/status/..%2F..%2Fetc%2Fpasswd'),
    status: 404,
    code: 'job_not_found',
  },
  { name: 'encoded NUL id', send: get('/v2/echo/status/%00'), status: 404, code: 'job_not_found' },
  { name: 'unicode id', send: get('/v2/echo/status/%E2%9C%93%F0%9F%92%A5'), status: 404, code: 'job_not_found' },
  { name: 'bad percent-encoding id', send: get('/v2/echo/status/%ZZ'), status: 404, code: 'job_not_found' },
  { name: '5000-character id', send: get(`/v2/echo/status/${'a'.repeat(5000)}`), status: 404, code: 'job_not_found' },
  {
    name: 'job id of an SQL injection',
    send: get(`/v2/echo/status/${encodeURIComponent("x' OR '1'='1")}`),
    status: 404,
    code: 'job_not_found',
  },
  { name: 'unicode endpoint id', send: get('/v2/%E2%9C%93/health'), status: 404, code: 'endpoint_not_found' },
  { name: 'upper-case endpoint id', send: get('/v2/ECHO/health'), status: 404, code: 'endpoint_not_found' },
  { name: 'unknown operation', send: get('/v2/echo/bogus'), status: 404, code: 'route_not_found' },
  { name: '__proto__ as the operation', send: get('/v2/echo/__proto__'), status: 404, code: 'route_not_found' },
  {
    name: 'constructor as the operation',
    send: (id) => get(`/v2/echo/constructor/${id}`),
    status: 404,
    code: 'route_not_found',
  },
  { name: 'no operation', send: get('/v2/echo'), status: 404, code: 'route_not_found' },
  { name: 'protocol-relative path', send: get('//v2/echo/health'), status: 404, code: 'route_not_found' },
  // --- query values: 400 with the parameter's code
  {
    name: 'wait not a number',
    send: post('/v2/echo/runsync?wait=abc', '{"input":{}}'),
    status: 400,
    code: 'invalid_wait',
  },
  { name: 'wait negative', send: post('/v2/echo/runsync?wait=-1', '{"input":{}}'), status: 400, code: 'invalid_wait' },
  {
    name: 'wait in exponent form',
    send: post('/v2/echo/runsync?wait=1e3', '{"input":{}}'),
    status: 400,
    code: 'invalid_wait',
  },
  {
    name: 'wait with 20 digits',
    send: post('/v2/echo/runsync?wait=99999999999999999999', '{"input":{}}'),
    status: 400,
    code: 'invalid_wait',
  },
  { name: 'ttl below the minimum', send: (id) => get(`/v2/echo/status/${id}?ttl=5`), status: 400, code: 'invalid_ttl' },
  {
    name: 'stream wait over the maximum',
    send: (id) => get(`/v2/echo/stream/${id}?wait=300001`),
    status: 400,
    code: 'invalid_wait',
  },
  // --- auth header tricks: 401 unauthorized (or accepted where the contract says so)
  { name: 'no Authorization', send: get('/v2/echo/health', { auth: null }), status: 401, code: 'unauthorized' },
  { name: 'empty Bearer', send: get('/v2/echo/health', { auth: 'Bearer' }), status: 401, code: 'unauthorized' },
  {
    name: 'Basic auth',
    send: get('/v2/echo/health', { auth: 'Basic dGVzdDp0ZXN0' }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'key with a suffix',
    send: get('/v2/echo/health', { auth: 'Bearer test-key-extra' }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'key prefix only',
    send: get('/v2/echo/health', { auth: 'Bearer test-ke' }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'worker token as API key',
    send: get('/v2/echo/health', { auth: 'Bearer test-worker-token' }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'stored-key shape, unknown',
    send: get('/v2/echo/health', { auth: `Bearer berth_sk_aaaaaaaaaaaa_${'A'.repeat(43)}` }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'first of two Authorization headers is wrong',
    send: get('/v2/echo/health', { auth: 'Bearer wrong', headers: ['Authorization: Bearer test-key'] }),
    status: 401,
    code: 'unauthorized',
  },
  {
    name: 'lower-case bearer, extra spaces',
    send: get('/v2/echo/health', { auth: 'bearer    test-key   ' }),
    status: 200,
  },
  { name: 'bare key (docs curl form)', send: get('/v2/echo/health', { auth: 'test-key' }), status: 200 },
  // --- upgrade offers on API routes: declined, served as plain HTTP/1.1
  {
    name: 'Upgrade: h2c on /health (curl --http2)',
    send: get('/v2/echo/health', {
      headers: ['Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA'],
    }),
    status: 200,
  },
  {
    name: 'Upgrade: h2c on POST /run with a body',
    send: run('{"input": {"h2c": true}}', ['Connection: Upgrade', 'Upgrade: h2c']),
    status: 200,
  },
  {
    name: 'WebSocket upgrade offer on /health',
    send: get('/v2/echo/health', {
      headers: [
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      ],
    }),
    status: 200,
  },
  {
    name: 'Upgrade: h2c on an unknown route',
    send: get('/v2/echo/bogus', { headers: ['Connection: Upgrade', 'Upgrade: h2c'] }),
    status: 404,
    code: 'route_not_found',
  },
  // --- content types are not required: JSON under another type is accepted
  {
    name: 'valid JSON as text/plain',
    send: run('{"input": {"ct": "text"}}', ['Content-Type: text/plain']),
    status: 200,
  },
  { name: 'valid JSON without Content-Type', send: run('{"input": {"ct": "none"}}'), status: 200 },
];

/** A chunked body of `size` bytes of JSON-ish filler, without Content-Length. */
function chunked(path: string, size: number): Send {
  return {
    stream: async (s) => {
      s.write(raw('POST', path, { headers: ['Transfer-Encoding: chunked'], length: false }));
      // Valid JSON as far as it goes (an open string), so only the size can refuse it: a big body is checked as it
      // streams, and filler that is not JSON would be refused at its first byte with 400 instead.
      const head = '{"input":{"pad":"';
      s.write(`${head.length.toString(16)}\r\n${head}\r\n`);
      const chunk = Buffer.alloc(256 * 1024, 0x61);
      let sent = head.length;
      while (sent < size && !s.destroyed) {
        const n = Math.min(chunk.length, size - sent);
        s.write(`${n.toString(16)}\r\n`);
        s.write(chunk.subarray(0, n));
        const ok = s.write('\r\n');
        sent += n;
        if (!ok) await new Promise((r) => s.once('drain', r));
      }
      if (!s.destroyed) s.write('0\r\n\r\n');
    },
  };
}

/** Sends `data` in `parts` pieces, `gapMs` apart. */
function slowly(data: Buffer, parts: number, gapMs: number): Send {
  return {
    stream: async (s) => {
      const step = Math.ceil(data.length / parts);
      for (let i = 0; i < data.length && !s.destroyed; i += step) {
        s.write(data.subarray(i, i + step));
        await pause(gapMs);
      }
    },
  };
}

/** Sends `head`, then a little more, then nothing. */
function stall(head: Buffer, more: string): Send {
  return {
    stream: async (s) => {
      s.write(head);
      await pause(100);
      if (!s.destroyed) s.write(more);
    },
  };
}

describe('hostile input over a real socket', () => {
  it(`answers each of ${CASES.length} malformed or hostile requests with its documented 4xx and code, never 500, and leaves other jobs alone`, {
    timeout: 60_000,
  }, async () => {
    expect(CASES.length).toBeGreaterThanOrEqual(60);
    // Short client timeouts so the slow-client cases finish quickly.
    await using t = await listening({ httpTimeouts: { headersMs: 700, requestMs: 1200 } });
    // Start the body-checking threads first: under vitest they load their TypeScript through tsx, seconds on a
    // busy machine, which would eat the 1.2 s budget of the first big-body case (built, they start in ~50 ms).
    // (A body refused after its check: no job is made.)
    const warm = await call(t.server, 'POST', '/v2/echo/run', {
      raw: `{"input":{"pad":"${'w'.repeat(300 * 1024)}"},"policy":{"warm":1}}`,
    });
    expect(warm.body.code).toBe('invalid_request');
    const w = await ScriptedWorker.connect(t.url);
    await w.next('welcome');
    // Before: one completed job, one queued job (the worker holds a running one so the queue keeps it).
    const done = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: { before: 1 } } })).body.id as string;
    const a = await w.next('job.assign');
    w.send({ type: 'job.complete', id: done, attempt: a.attempt, output: { kept: true } });
    await untilStatus(t.server, 'echo', done, 'COMPLETED');
    const running = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: { before: 2 } } })).body
      .id as string;
    const b = await w.next('job.assign');
    const queued = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: { before: 3 } } })).body.id as string;

    const failures: string[] = [];
    const accepted: string[] = [];
    for (const c of CASES) {
      const send = typeof c.send === 'function' ? c.send(queued) : c.send;
      const payload = Buffer.isBuffer(send) ? send : send.stream;
      let r;
      try {
        r = await rawRequest(t.port, payload, c.head ? { head: true } : {});
      } catch (err) {
        failures.push(`${c.name}: ${(err as Error).message}`);
        continue;
      }
      if (r.status >= 500) failures.push(`${c.name}: answered ${r.status} ${r.body.slice(0, 200)}`);
      else if (r.status !== c.status || (c.code !== undefined && r.json?.['code'] !== c.code)) {
        failures.push(`${c.name}: expected ${c.status} ${c.code ?? ''}, got ${r.status} ${r.body.slice(0, 200)}`);
      } else if (c.status >= 400 && !c.head && typeof r.json?.['error'] !== 'string')
        failures.push(`${c.name}: no error message`);
      if (r.status === 200 && typeof r.json?.['id'] === 'string') accepted.push(r.json['id']);
    }
    expect(failures, failures.join('\n')).toEqual([]);

    // Nothing was polluted by the __proto__ / constructor bodies.
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>)['polluted']).toBeUndefined();
    // The jobs from before are untouched; the worker can still finish the running one and take the queued one.
    expect((await call(t.server, 'GET', `/v2/echo/status/${done}`)).body).toMatchObject({
      status: 'COMPLETED',
      output: { kept: true },
    });
    expect((await call(t.server, 'GET', `/v2/echo/status/${queued}`)).body.status).toBe('IN_QUEUE');
    w.send({ type: 'job.complete', id: running, attempt: b.attempt, output: { still: 'fine' } });
    expect((await untilStatus(t.server, 'echo', running, 'COMPLETED')).output).toEqual({ still: 'fine' });
    const c = await w.next('job.assign');
    expect(c.id).toBe(queued);
    w.send({ type: 'job.complete', id: queued, attempt: c.attempt, output: 3 });
    await untilStatus(t.server, 'echo', queued, 'COMPLETED');
    // A job accepted after the barrage runs normally; the jobs the table legitimately accepted are all queued.
    const after = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: { after: true } } })).body
      .id as string;
    expect((await call(t.server, 'GET', `/v2/echo/status/${after}`)).body.status).toMatch(/IN_QUEUE|IN_PROGRESS/);
    for (const id of accepted) expect((await call(t.server, 'GET', `/v2/echo/status/${id}`)).status).toBe(200);
    expect((await call(t.server, 'GET', '/ping')).status).toBe(200);
    await w.close();
  });
});
