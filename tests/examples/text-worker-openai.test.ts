import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil, startBerthDev, type BerthDev } from '../e2e/harness.test-helpers.js';
import { MODELS_DIR, REPO_ROOT } from '../../examples/text-worker/src/testing.test-helpers.js';

// The unmodified `openai` client against the real `berth dev` running the text worker on stories260K
// (offline: BERTH_MODELS_DIR makes the worker load $BERTH_MODELS_DIR/stories260K with remote loading off).
let berth: BerthDev;
let client: OpenAI;
const MODEL = 'stories260K';
const user = (content: string) => [{ role: 'user' as const, content }];

beforeAll(async () => {
  berth = await startBerthDev({
    config: join(REPO_ROOT, 'examples/text-worker/berth.config.json'),
    env: { BERTH_MODELS_DIR: MODELS_DIR, BERTH_TEXT_THREADS: '1' },
    waitForWorkers: ['text'],
  });
  client = new OpenAI({
    apiKey: berth.apiKey,
    baseURL: `${berth.url}/v2/text/openai/v1`,
    maxRetries: 0,
    timeout: 30_000,
  });
}, 60_000);
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
});

describe('openai client -> berth dev -> text worker (stories260K)', () => {
  it('chat.completions.create: the model text, real token counts, finish_reason', async () => {
    const r = await client.chat.completions.create({
      model: MODEL,
      messages: user('Once upon a time'),
      max_tokens: 30,
      temperature: 0,
    });
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe(MODEL);
    expect(r.choices[0]!.message).toMatchObject({
      role: 'assistant',
      content: expect.stringContaining('there was a little girl named Lily'),
    });
    expect(r.choices[0]!.finish_reason).toBe('length');
    // "<s>Once upon a time" is 5 tokens.
    expect(r.usage).toEqual({ prompt_tokens: 5, completion_tokens: 30, total_tokens: 35 });
    const stopped = await client.chat.completions.create({
      model: MODEL,
      messages: user('Once upon a time'),
      max_tokens: 30,
      temperature: 0,
      stop: ['Lily'],
    });
    expect(stopped.choices[0]!.message.content).toBe(', there was a little girl named ');
    expect(stopped.choices[0]!.finish_reason).toBe('stop');
  });

  it('the same seed gives the same sampled text; n gives n choices', async () => {
    const ask = (seed: number) =>
      client.chat.completions.create({
        model: MODEL,
        messages: user('Tom had a dog'),
        max_tokens: 40,
        temperature: 1,
        top_p: 0.95,
        seed,
        n: 2,
      });
    const [a, b] = await Promise.all([ask(7), ask(7)]);
    expect(a.choices).toHaveLength(2);
    expect(a.choices.map((c) => c.message.content)).toEqual(b.choices.map((c) => c.message.content));
    expect(a.usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('stream: one chunk per token, arriving while the model generates, then [DONE]', async () => {
    const full = await client.chat.completions.create({
      model: MODEL,
      messages: user('Once upon a time'),
      max_tokens: 200,
      temperature: 0,
    });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: user('Once upon a time'),
      max_tokens: 200,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    const arrivals: number[] = [];
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    let roleChunks = 0;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      const c = chunk.choices[0];
      if (!c) continue;
      if (c.delta.role) roleChunks++;
      if (c.delta.content) {
        arrivals.push(performance.now());
        text += c.delta.content;
      }
      finish = c.finish_reason ?? finish;
    }
    expect(roleChunks).toBe(1);
    expect(text).toBe(full.choices[0]!.message.content);
    expect(finish).toBe(full.choices[0]!.finish_reason);
    expect(usage).toEqual(full.usage);
    // About one chunk per token (a few tokens are held back until their text is complete).
    expect(arrivals.length).toBeGreaterThan(usage!.completion_tokens * 0.8);
    // Incremental, not one burst: the chunks arrive over many separate moments.
    const distinct = new Set(arrivals.map((t) => Math.floor(t / 5))).size;
    expect(distinct).toBeGreaterThan(10);
  });

  it('completions.create and models.list()', async () => {
    const r = await client.completions.create({
      model: MODEL,
      prompt: 'Once upon a time',
      max_tokens: 12,
      temperature: 0,
    });
    expect(r.object).toBe('text_completion');
    expect(r.choices[0]!.text).toContain('there was a little girl');
    expect(r.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 12 });
    let streamed = '';
    for await (const c of await client.completions.create({
      model: MODEL,
      prompt: 'Once upon a time',
      max_tokens: 12,
      temperature: 0,
      stream: true,
    }))
      streamed += c.choices[0]?.text ?? '';
    expect(streamed).toBe(r.choices[0]!.text);
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    expect(models).toEqual([{ id: MODEL, object: 'model', created: expect.any(Number), owned_by: 'berth' }]);
  });

  it('bad requests are 400s the client raises as BadRequestError, naming the field', async () => {
    const bad = async (body: Record<string, unknown>) => {
      const err = await client.chat.completions.create({ model: MODEL, messages: user('hi'), ...body } as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      return err as InstanceType<typeof OpenAI.BadRequestError>;
    };
    expect((await bad({ temperature: 5 })).param).toBe('temperature');
    expect((await bad({ messages: [] })).param).toBe('messages');
    expect((await bad({ messages: [{ role: 'robot', content: 'x' }] })).param).toBe('messages[0].role');
    expect((await bad({ max_tokens: -1 })).param).toBe('max_tokens');
    expect((await bad({ stop: ['a', 'b', 'c', 'd', 'e'] })).param).toBe('stop');
    // Checked by the worker: the prompt does not fit the 512-token context.
    const long = await bad({ messages: user('Once upon a time '.repeat(200)) });
    expect(long.code).toBe('context_length_exceeded');
    expect(long.message).toContain('512');
    // The same refusal on a streaming request: a 400 before any event.
    const longStream = await client.chat.completions
      .create({ model: MODEL, messages: user('Once upon a time '.repeat(200)), stream: true })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(longStream).toBeInstanceOf(OpenAI.BadRequestError);
    expect((longStream as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('context_length_exceeded');
    const wrongKey = new OpenAI({ apiKey: 'nope', baseURL: `${berth.url}/v2/text/openai/v1`, maxRetries: 0 });
    await expect(wrongKey.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('a client that stops reading the stream cancels the job', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: user('Once upon a time'),
      max_tokens: 500,
      // Greedy: this prompt runs all 500 tokens without an end of text (sampled, a story may end after ~160, and
      // with the engine on its own thread that can come before the cancel: the job would complete).
      temperature: 0,
      stream: true,
    });
    let id = '';
    for await (const chunk of stream) {
      id = chunk.id;
      if (chunk.choices[0]?.delta.content) break; // closes the connection
    }
    const jobId = id.replace(/^chatcmpl-/, '');
    const st = await pollUntil(
      () => berth.json(`/v2/text/status/${jobId}`),
      (r) => r.body?.status !== 'IN_PROGRESS',
      10_000,
      20,
    );
    expect(st.body.status).toBe('CANCELLED');
  });

  it('16 concurrent requests all answer, each with the same text as alone', async () => {
    const prompts = Array.from(
      { length: 16 },
      (_, i) =>
        ['Once upon a time', 'Tom had a red ball', 'The sun was hot', 'Lily saw a cat'][i % 4]! + ' '.repeat(i % 3),
    );
    const ask = (p: string) =>
      client.chat.completions.create({
        model: MODEL,
        messages: user(p.trim()),
        max_tokens: 30 + (prompts.indexOf(p) % 5),
        temperature: 0,
      });
    const alone = new Map<string, string>();
    for (const p of new Set(prompts.map((x) => x.trim())))
      alone.set(
        p,
        (await client.chat.completions.create({ model: MODEL, messages: user(p), max_tokens: 40, temperature: 0 }))
          .choices[0]!.message.content!,
      );
    const from = berth.lines.length;
    const together = await Promise.all(prompts.map(ask));
    // They shared the engine: requests finished while many others were still decoding in the same batch.
    const logged = () =>
      berth.lines
        .slice(from)
        .flatMap((l) => /generated\b.*\bengineLoad(?:=|":)(\d+)/.exec(l.text)?.[1] ?? [])
        .map(Number);
    const loads = await pollUntil(
      async () => logged(),
      (l) => l.length >= 16,
      5000,
      20,
    );
    expect(loads).toHaveLength(16);
    expect(Math.max(...loads)).toBeGreaterThanOrEqual(8);
    together.forEach((r, i) => {
      const expected = alone.get(prompts[i]!.trim())!;
      expect(expected.startsWith(r.choices[0]!.message.content!)).toBe(true);
      expect(r.usage!.completion_tokens).toBeGreaterThanOrEqual(30);
    });
  });

  it('plain /runsync with {prompt} answers {text: [..], input_tokens, output_tokens}', async () => {
    const { status, body } = await berth.post('/v2/text/runsync', {
      input: { prompt: 'Once upon a time', max_tokens: 20, temperature: 0 },
    });
    expect(status).toBe(200);
    expect(body.status).toBe('COMPLETED');
    expect(body.output).toEqual({
      text: [expect.stringContaining('there was a little girl')],
      input_tokens: 5,
      output_tokens: 20,
    });
  });
});
