import { describe, expect, it } from 'vitest';
import { decode, decodeJobRequest, decodeServerMessage, decodeWorkerMessage } from './decode.js';
import { JobRequest } from './job.js';
import { ServerMessage, WorkerMessage } from './ws.js';

/** The same answer as zod's, key order included (JSON text compares both), and never the input object itself. */
function sameAsZod(
  fast: { ok: boolean; value?: unknown; error?: string },
  slow: { ok: boolean; value?: unknown; error?: string },
  input: unknown,
) {
  expect(fast.ok).toBe(slow.ok);
  if (!fast.ok) return expect(fast.error).toBe(slow.error);
  expect(fast.value).toEqual(slow.value);
  expect(JSON.stringify(fast.value)).toBe(JSON.stringify(slow.value));
  expect(Object.keys(fast.value as object)).toEqual(Object.keys(slow.value as object));
  expect(fast.value).not.toBe(input);
}

const REQUESTS: string[] = [
  '{"input":{"a":1}}',
  '{"input":{}}',
  '{"webhookV2":"x","input":{"n":[1,2]},"z":null}',
  '{"input":{"__proto__":{"polluted":true}}}',
  '{"input":[1]}',
  '{"input":null}',
  '{"input":"text"}',
  '{}',
  '{"input":{"a":1},"webhook":"https://example.com/hook"}',
  '{"input":{"a":1},"webhook":"ftp://example.com/hook"}',
  '{"input":{"a":1},"policy":{"ttl":20000}}',
  '{"input":{"a":1},"policy":{"bogus":1}}',
  '{"input":{"a":1},"s3Config":{}}',
  '{"input":{"a":1},"__proto__":{"b":1}}',
  '[]',
  'null',
];

const WORKER: string[] = [
  '{"type":"job.complete","id":"j1","attempt":1,"output":{"x":1}}',
  '{"id":"j1","output":null,"attempt":3,"type":"job.complete","extra":true}',
  '{"type":"job.complete","id":"j1","attempt":1,"output":[1,"a"]}',
  '{"type":"job.complete","id":"j1","attempt":1}',
  '{"type":"job.complete","id":"","attempt":1,"output":1}',
  `{"type":"job.complete","id":"${'x'.repeat(201)}","attempt":1,"output":1}`,
  `{"type":"job.complete","id":"${'x'.repeat(200)}","attempt":1,"output":1}`,
  '{"type":"job.complete","id":"j1","attempt":0,"output":1}',
  '{"type":"job.complete","id":"j1","attempt":1.5,"output":1}',
  '{"type":"job.complete","id":"j1","attempt":1e300,"output":1}',
  '{"type":"job.complete","id":7,"attempt":1,"output":1}',
  '{"type":"job.stream","id":"j1","attempt":1,"seq":0,"chunks":[{"a":1},"t",null]}',
  '{"chunks":[[1],2],"seq":7,"attempt":2,"id":"j1","type":"job.stream","extra":1}',
  '{"type":"job.stream","id":"j1","attempt":1,"seq":0,"chunks":[]}',
  '{"type":"job.stream","id":"j1","attempt":1,"seq":-1,"chunks":[1]}',
  '{"type":"job.stream","id":"j1","attempt":1,"seq":1.5,"chunks":[1]}',
  '{"type":"job.stream","id":"j1","attempt":1,"seq":1e300,"chunks":[1]}',
  '{"type":"job.stream","id":"j1","attempt":1,"seq":"0","chunks":[1]}',
  '{"type":"job.stream","id":"j1","attempt":1,"seq":0,"chunks":{"0":1}}',
  '{"type":"job.stream","id":"j1","attempt":1,"chunks":[1]}',
  '{"type":"job.stream","id":"","attempt":1,"seq":0,"chunks":[1]}',
  '{"type":"job.stream","id":"j1","attempt":0,"seq":0,"chunks":[1]}',
  '{"type":"job.fail","id":"j1","attempt":1,"error":"boom"}',
  '{"type":"ping","t":1}',
];

const SERVER: string[] = [
  '{"type":"job.assign","id":"j1","attempt":1,"input":{"a":1}}',
  '{"type":"job.assign","id":"j1","attempt":2,"input":{"a":1},"deadline":1700000000000}',
  '{"deadline":5,"input":{},"attempt":1,"id":"j1","type":"job.assign","junk":1}',
  '{"type":"job.assign","id":"j1","attempt":1,"input":{"a":1},"deadline":1.5}',
  '{"type":"job.assign","id":"j1","attempt":1,"input":{"a":1},"deadline":"soon"}',
  '{"type":"job.assign","id":"j1","attempt":1,"input":{},"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}',
  '{"type":"job.assign","id":"j1","attempt":1,"input":{},"traceparent":7}',
  `{"type":"job.assign","id":"j1","attempt":1,"input":{},"traceparent":"${'a'.repeat(300)}"}`,
  '{"type":"job.assign","id":"j1","attempt":1,"input":[]}',
  '{"type":"job.assign","id":"j1","attempt":1}',
  '{"type":"job.assign","id":"j1","attempt":1,"input":{},"s3Config":{"accessId":"a","accessSecret":"b","bucketName":"c","endpointUrl":"https://s3.example.com"}}',
  '{"type":"job.ack","id":"j1","attempt":1}',
  '{"type":"job.ack","id":"j1","attempt":1,"more":2}',
  '{"type":"job.ack","id":"j1","attempt":-1}',
  '{"type":"job.ack","id":"j1"}',
  '{"type":"job.cancel","id":"j1","attempt":1,"reason":"cancelled"}',
];

describe('fast paths of the per-job messages', () => {
  it('a job request decodes exactly as zod decodes it (fast shape or not)', () => {
    for (const text of REQUESTS) {
      const v = JSON.parse(text) as unknown;
      sameAsZod(decodeJobRequest(v), decode(JobRequest, JSON.parse(text)), v);
    }
  });

  it('worker and server frames decode exactly as zod decodes them', () => {
    for (const text of WORKER) sameAsZod(decodeWorkerMessage(text), decode(WorkerMessage, JSON.parse(text)), undefined);
    for (const text of SERVER) sameAsZod(decodeServerMessage(text), decode(ServerMessage, JSON.parse(text)), undefined);
  });

  it('keeps the input object as sent (no copy of a large input) and refuses what zod refuses, with its message', () => {
    const input = { big: 'x'.repeat(1000) };
    const r = decodeJobRequest({ input });
    expect(r.ok && r.value.input).toBe(input);
    const bad = decodeJobRequest({ input: [] });
    expect(bad).toMatchObject({ ok: false, error: 'input: must be a JSON object' });
  });
});
