import { describe, expect, it } from 'vitest';
import { decodeServerMessage, decodeWorkerMessage } from './decode.js';
import { PROTOCOL_VERSION, ServerMessage, WorkerMessage } from './ws.js';

type ByType<M extends { type: string }> = { [K in M['type']]: Extract<M, { type: K }> };

/** One valid example of every worker -> server message (the mapped type makes a missing one a type error). */
const WORKER: ByType<WorkerMessage> = {
  hello: {
    type: 'hello',
    protocol: PROTOCOL_VERSION,
    workerId: 'gpu-1.pod:a_b',
    endpointId: 'my-endpoint',
    concurrency: 4,
    stream: true,
    inflight: [{ id: 'j1', attempt: 2 }],
    sdkVersion: '0.1.0',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } } },
    batch: { maxSize: 16 },
  },
  batch: { type: 'batch', size: 7 },
  concurrency: { type: 'concurrency', concurrency: 0 },
  'job.progress': { type: 'job.progress', id: 'j1', attempt: 1, progress: { pct: 50, note: 'half' } },
  'job.stream': { type: 'job.stream', id: 'j1', attempt: 1, seq: 3, chunks: ['tok', { delta: 'x' }, null, 7] },
  'job.complete': { type: 'job.complete', id: 'j1', attempt: 1, output: { text: ['done'], n: 1.5 } },
  'job.fail': { type: 'job.fail', id: 'j1', attempt: 3, error: 'boom', aborted: true },
  'job.log': {
    type: 'job.log',
    id: 'j1',
    attempt: 2,
    lines: [
      { t: 1_700_000_000_000, level: 'warn', msg: 'low memory', fields: { freeMb: 12 } },
      { t: 1_700_000_000_001, level: 'info', msg: 'done' },
    ],
  },
  draining: { type: 'draining' },
  ping: { type: 'ping', t: 1_700_000_000_000 },
  pong: { type: 'pong', t: 12.5 },
};

/** One valid example of every server -> worker message. */
const SERVER: ByType<ServerMessage> = {
  welcome: {
    type: 'welcome',
    protocol: PROTOCOL_VERSION,
    workerId: 'w-1',
    heartbeatMs: 5_000,
    stale: [{ id: 'old', attempt: 1 }],
    acks: true,
    blobs: true,
  },
  'job.ack': { type: 'job.ack', id: 'j1', attempt: 2 },
  'job.assign': {
    type: 'job.assign',
    id: 'j1',
    attempt: 1,
    input: { prompt: 'hi', nested: { a: [1, 2] } },
    s3Config: {
      accessId: 'a',
      accessSecret: 's',
      bucketName: 'b',
      endpointUrl: 'https://s3.example.org',
      objectPath: 'x/y',
    },
    deadline: 1_700_000_060_000,
  },
  'job.cancel': { type: 'job.cancel', id: 'j1', attempt: 2, reason: 'timed_out' },
  drain: { type: 'drain', deadline: 1_700_000_030_000 },
  error: { type: 'error', code: 'protocol_mismatch', message: 'server speaks protocol 1' },
  ping: { type: 'ping', t: 1 },
  pong: { type: 'pong', t: 2 },
};

/** Minimal variants: optional fields left out. */
const WORKER_MINIMAL = [
  { type: 'job.fail', id: 'j', attempt: 1, error: '' },
  { type: 'job.progress', id: 'j', attempt: 1, progress: null },
  { type: 'job.complete', id: 'j', attempt: 1, output: 'plain string' },
];
const SERVER_MINIMAL = [
  { type: 'job.assign', id: 'j', attempt: 1, input: {} },
  ...['cancelled', 'expired', 'stale'].map((reason) => ({ type: 'job.cancel', id: 'j', attempt: 1, reason })),
];

describe('WebSocket messages', () => {
  it('have an example for every message type of the unions', () => {
    expect(Object.keys(WORKER).sort()).toEqual(WorkerMessage.options.map((o) => o.shape.type.value).sort());
    expect(Object.keys(SERVER).sort()).toEqual(ServerMessage.options.map((o) => o.shape.type.value).sort());
  });

  it.each(Object.values(WORKER).concat(WORKER_MINIMAL as WorkerMessage[]))(
    'worker message $type round-trips',
    (msg) => {
      expect(decodeWorkerMessage(JSON.stringify(msg))).toEqual({ ok: true, value: msg });
    },
  );

  it.each(Object.values(SERVER).concat(SERVER_MINIMAL as ServerMessage[]))(
    'server message $type round-trips',
    (msg) => {
      expect(decodeServerMessage(JSON.stringify(msg))).toEqual({ ok: true, value: msg });
    },
  );

  it('defaults hello.inflight and welcome.stale to [] and welcome.acks to false (a server that does not acknowledge)', () => {
    const { inflight: _i, ...hello } = WORKER.hello;
    expect(decodeWorkerMessage(JSON.stringify(hello))).toMatchObject({ ok: true, value: { inflight: [] } });
    const { stale: _s, acks: _a, ...welcome } = SERVER.welcome;
    expect(decodeServerMessage(JSON.stringify(welcome))).toMatchObject({ ok: true, value: { stale: [], acks: false } });
  });

  it('drops unknown keys so a newer peer can add fields', () => {
    const r = decodeWorkerMessage(JSON.stringify({ ...WORKER['job.complete'], future: 1 }));
    expect(r).toEqual({ ok: true, value: WORKER['job.complete'] });
  });

  it('refuses a message sent in the wrong direction', () => {
    expect(decodeWorkerMessage(JSON.stringify(SERVER['job.assign']))).toMatchObject({
      ok: false,
      error: expect.stringContaining('type'),
    });
    expect(decodeServerMessage(JSON.stringify(WORKER.hello))).toMatchObject({
      ok: false,
      error: expect.stringContaining('type'),
    });
  });

  const badWorker: [string, unknown][] = [
    ['missing type', { id: 'j', attempt: 1 }],
    ['attempt 0', { ...WORKER['job.complete'], attempt: 0 }],
    ['fractional attempt', { ...WORKER['job.complete'], attempt: 1.5 }],
    ['empty id', { ...WORKER['job.complete'], id: '' }],
    ['id over 200 chars', { ...WORKER['job.complete'], id: 'x'.repeat(201) }],
    ['negative seq', { ...WORKER['job.stream'], seq: -1 }],
    ['no chunks', { ...WORKER['job.stream'], chunks: [] }],
    ['chunks not an array', { ...WORKER['job.stream'], chunks: 'abc' }],
    ['non-string error', { ...WORKER['job.fail'], error: { message: 'x' } }],
    ['hello concurrency -1', { ...WORKER.hello, concurrency: -1 }],
    ['hello concurrency 1025', { ...WORKER.hello, concurrency: 1025 }],
    ['concurrency -1', { type: 'concurrency', concurrency: -1 }],
    ['bad workerId characters', { ...WORKER.hello, workerId: 'has space' }],
    ['workerId over 128 chars', { ...WORKER.hello, workerId: 'w'.repeat(129) }],
    ['empty workerId', { ...WORKER.hello, workerId: '' }],
    ['hello without stream flag', { ...WORKER.hello, stream: undefined }],
    [
      'inflight over 1024',
      { ...WORKER.hello, inflight: Array.from({ length: 1025 }, (_, i) => ({ id: `j${i}`, attempt: 1 })) },
    ],
    ['ping without t', { type: 'ping' }],
  ];
  it.each(badWorker)('refuses a worker message with %s', (_, msg) => {
    const r = decodeWorkerMessage(JSON.stringify(msg));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues?.length).toBeGreaterThan(0);
  });

  const badServer: [string, unknown][] = [
    ['unknown cancel reason', { ...SERVER['job.cancel'], reason: 'bored' }],
    ['unknown error code', { ...SERVER.error, code: 'teapot' }],
    ['assign with array input', { ...SERVER['job.assign'], input: [] }],
    ['assign with loose s3Config', { ...SERVER['job.assign'], s3Config: { accessId: 'a' } }],
    ['welcome heartbeat 0', { ...SERVER.welcome, heartbeatMs: 0 }],
    ['drain without deadline', { type: 'drain' }],
  ];
  it.each(badServer)('refuses a server message with %s', (_, msg) => {
    expect(decodeServerMessage(JSON.stringify(msg)).ok).toBe(false);
  });
});
