import { describe, expect, it } from 'vitest';
import { API_KEY, ScriptedWorker, bodyReader, call, listening, testServer, until } from '../../testing.test-helpers.js';

const CHAT = '/v2/echo/openai/v1/chat/completions';
const chat = (extra: Record<string, unknown> = {}) => ({
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

describe('OpenAI route: request checks (no socket)', () => {
  const cases: [string, string, string, unknown, number, string, string | null][] = [
    ['no messages', 'POST', CHAT, { model: 'm' }, 400, 'invalid_request', 'messages'],
    ['empty messages', 'POST', CHAT, chat({ messages: [] }), 400, 'invalid_request', 'messages'],
    [
      'bad role',
      'POST',
      CHAT,
      chat({ messages: [{ role: 'robot', content: 'x' }] }),
      400,
      'invalid_request',
      'messages[0].role',
    ],
    [
      'content number',
      'POST',
      CHAT,
      chat({ messages: [{ role: 'user', content: 5 }] }),
      400,
      'invalid_request',
      'messages[0].content',
    ],
    ['no model', 'POST', CHAT, { messages: [{ role: 'user', content: 'x' }] }, 400, 'invalid_request', 'model'],
    ['max_tokens 0', 'POST', CHAT, chat({ max_tokens: 0 }), 400, 'invalid_request', 'max_tokens'],
    ['max_tokens 1.5', 'POST', CHAT, chat({ max_tokens: 1.5 }), 400, 'invalid_request', 'max_tokens'],
    ['temperature 3', 'POST', CHAT, chat({ temperature: 3 }), 400, 'invalid_request', 'temperature'],
    ['temperature string', 'POST', CHAT, chat({ temperature: 'hot' }), 400, 'invalid_request', 'temperature'],
    ['top_p 0', 'POST', CHAT, chat({ top_p: 0 }), 400, 'invalid_request', 'top_p'],
    ['top_p 1.1', 'POST', CHAT, chat({ top_p: 1.1 }), 400, 'invalid_request', 'top_p'],
    ['stop 5 strings', 'POST', CHAT, chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'invalid_request', 'stop'],
    ['stop empty', 'POST', CHAT, chat({ stop: '' }), 400, 'invalid_request', 'stop'],
    ['n 0', 'POST', CHAT, chat({ n: 0 }), 400, 'invalid_request', 'n'],
    ['n 17', 'POST', CHAT, chat({ n: 17 }), 400, 'invalid_request', 'n'],
    ['seed 1.5', 'POST', CHAT, chat({ seed: 1.5 }), 400, 'invalid_request', 'seed'],
    ['stream string', 'POST', CHAT, chat({ stream: 'yes' }), 400, 'invalid_request', 'stream'],
    [
      'stream_options without stream',
      'POST',
      CHAT,
      chat({ stream_options: { include_usage: true } }),
      400,
      'invalid_request',
      'stream_options',
    ],
    [
      'completions prompt missing',
      'POST',
      '/v2/echo/openai/v1/completions',
      { model: 'm' },
      400,
      'invalid_request',
      'prompt',
    ],
    ['body array', 'POST', CHAT, [1], 400, 'invalid_request', null],
    ['unknown path', 'POST', '/v2/echo/openai/v1/embeddings', chat(), 404, 'route_not_found', null],
    ['GET chat', 'GET', CHAT, undefined, 405, 'method_not_allowed', null],
    ['unknown endpoint', 'POST', '/v2/nope/openai/v1/chat/completions', chat(), 404, 'endpoint_not_found', null],
  ];
  it.each(cases)(
    '%s -> 400 with param (or the status given)',
    async (_name, method, path, body, status, code, param) => {
      const r = await call(testServer(), method, path, body === undefined ? {} : { body });
      expect(r.status).toBe(status);
      expect(r.body.error).toMatchObject({ code, param, type: expect.any(String), message: expect.any(String) });
    },
  );

  it('over the openai rate limit: 429 in the OpenAI shape with Retry-After', async () => {
    const s = testServer({ rateLimits: { base: { openai: 1 } } });
    const first = await call(s, 'POST', CHAT, { body: chat({ temperature: 9 }) });
    expect(first.status).toBe(400); // counted, then refused by validation
    const second = await call(s, 'GET', '/v2/echo/openai/v1/models');
    expect(second.status).toBe(429);
    expect(second.body.error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error' });
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('bad JSON and a missing key answer in the OpenAI shape', async () => {
    const s = testServer();
    const badJson = await call(s, 'POST', CHAT, { raw: '{"model":' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toMatchObject({ code: 'invalid_json', type: 'invalid_request_error' });
    const noKey = await call(s, 'GET', '/v2/echo/openai/v1/models', { headers: { authorization: '' } });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error).toMatchObject({ code: 'unauthorized', type: 'authentication_error' });
  });
});

describe('OpenAI route over a real socket with a scripted worker', () => {
  it('queues {openai_route, openai_input} and answers the worker output as JSON', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const body = chat({ max_tokens: 5, custom_field: 1 });
    const res = fetch(`${t.url}${CHAT}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify(body),
    });
    const assign = await w.next('job.assign');
    expect(assign.input).toEqual({ openai_route: '/v1/chat/completions', openai_input: body });
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'yo' }, finish_reason: 'stop' }],
    };
    w.send({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output: [completion] });
    const r = await res;
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual(completion);
    await w.close();
  });

  it('a failed job answers 500 and a worker {error} output answers 400, both in the OpenAI shape', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const post = () =>
      fetch(`${t.url}${CHAT}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}` },
        body: JSON.stringify(chat()),
      });
    const r1 = post();
    const a1 = await w.next('job.assign');
    w.send({ type: 'job.fail', id: a1.id, attempt: a1.attempt, error: 'out of memory' });
    const res1 = await r1;
    expect(res1.status).toBe(500);
    expect(((await res1.json()) as any).error).toMatchObject({
      code: 'job_failed',
      message: expect.stringContaining('out of memory'),
    });
    const r2 = post();
    const a2 = await w.next('job.assign');
    w.send({
      type: 'job.complete',
      id: a2.id,
      attempt: a2.attempt,
      output: { error: { message: 'prompt too long', code: 'context_length_exceeded' } },
    });
    const res2 = await r2;
    expect(res2.status).toBe(400);
    expect(((await res2.json()) as any).error).toMatchObject({
      code: 'context_length_exceeded',
      message: 'prompt too long',
      type: 'invalid_request_error',
    });
    await w.close();
  });

  it('stream: true relays each chunk as it arrives, then data: [DONE]', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const pending = fetch(`${t.url}${CHAT}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify(chat({ stream: true })),
    });
    const a = await w.next('job.assign');
    // The response starts with the first chunk (so a refusal before it can still be a 4xx).
    w.send({
      type: 'job.stream',
      id: a.id,
      attempt: a.attempt,
      seq: 0,
      chunks: [{ object: 'chat.completion.chunk', n: 0 }],
    });
    const res = await pending;
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const body = bodyReader(res);
    const readUntil = body.until;
    await readUntil('"n":0}\n\n');
    expect(body.text).not.toContain('[DONE]');
    w.send({ type: 'job.stream', id: a.id, attempt: a.attempt, seq: 1, chunks: ['data: {"n":1}\n\n'] });
    await readUntil('"n":1}\n\n');
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: null });
    await readUntil('data: [DONE]\n\n');
    expect(body.text).toBe('data: {"object":"chat.completion.chunk","n":0}\n\ndata: {"n":1}\n\ndata: [DONE]\n\n');
    await w.close();
  });

  it('stream: a worker that answers the whole chat.completion without yielding is streamed as one chunk, then [DONE]', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const pending = fetch(`${t.url}${CHAT}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify(chat({ stream: true })),
    });
    const a = await w.next('job.assign');
    const output = {
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    };
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output });
    const res = await pending;
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events).toEqual([
      'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}',
      'data: [DONE]',
    ]);
    await w.close();
  });

  it('stream: a refusal before the first chunk is a plain 4xx; an error after chunks ends the stream with an error event', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url);
    const post = () =>
      fetch(`${t.url}${CHAT}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}` },
        body: JSON.stringify(chat({ stream: true })),
      });
    const r1 = post();
    const a1 = await w.next('job.assign');
    w.send({
      type: 'job.complete',
      id: a1.id,
      attempt: a1.attempt,
      output: { error: { message: 'prompt too long', code: 'context_length_exceeded' } },
    });
    const res1 = await r1;
    expect(res1.status).toBe(400);
    expect(res1.headers.get('content-type')).toContain('application/json');
    expect(((await res1.json()) as any).error.code).toBe('context_length_exceeded');
    const r2 = post();
    const a2 = await w.next('job.assign');
    w.send({ type: 'job.stream', id: a2.id, attempt: a2.attempt, seq: 0, chunks: [{ n: 0 }] });
    const res2 = await r2;
    expect(res2.status).toBe(200);
    w.send({ type: 'job.fail', id: a2.id, attempt: a2.attempt, error: 'GPU fell off' });
    const text = await res2.text();
    expect(text).toMatch(
      /^data: \{"n":0\}\n\ndata: \{"error":\{"message":"job \S+ failed: GPU fell off".*"code":"job_failed"\}\}\n\n$/,
    );
    expect(text).not.toContain('[DONE]');
    await w.close();
  });

  it('a client that disconnects cancels the job, streaming or not', async () => {
    await using t = await listening();
    const w = await ScriptedWorker.connect(t.url, { concurrency: 2 });
    for (const stream of [true, false]) {
      const ac = new AbortController();
      const res = fetch(`${t.url}${CHAT}`, {
        method: 'POST',
        signal: ac.signal,
        headers: { authorization: `Bearer ${API_KEY}` },
        body: JSON.stringify(chat({ stream })),
      });
      const a = await w.next('job.assign');
      if (stream) {
        w.send({ type: 'job.stream', id: a.id, attempt: a.attempt, seq: 0, chunks: [{ n: 0 }] });
        await res; // headers are in: the stream is open
      }
      ac.abort();
      await res.catch(() => undefined);
      expect(await w.next('job.cancel')).toMatchObject({ id: a.id, reason: 'cancelled' });
      await until(async () => (await call(t.server, 'GET', `/v2/echo/status/${a.id}`)).body.status === 'CANCELLED');
    }
    await w.close();
  });
});
