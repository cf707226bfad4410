import type { Job } from '@berth/worker';
import { ChunkQueue } from './chunk-queue.js';
import type { GenerateResult } from './engine/batch-engine.js';
import { InputError, readMessages, readSettings } from './params.js';
import { usageOf, type TextModel } from './text-model.js';

/**
 * The OpenAI side of the text worker: jobs whose input is `{openai_route, openai_input}` (what Berth's
 * `/openai/v1/...` route queues). Streaming requests yield one chunk object per token; the return value is the
 * complete response object.
 */
type Body = Record<string, unknown>;

/** Legacy completions default to 16 tokens, as on OpenAI. */
const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;

export function modelsList(m: TextModel) {
  return { object: 'list', data: [{ id: m.name, object: 'model', created: m.created, owned_by: 'berth' }] };
}

const finish = (r: GenerateResult) => (r.finishReason === 'cancelled' ? 'stop' : r.finishReason);

export async function* openAiJob(m: TextModel, job: Job, route: string, body: Body): AsyncGenerator<unknown, unknown> {
  if (route === '/v1/models') return modelsList(m);
  const chat = route === '/v1/chat/completions';
  if (!chat && route !== '/v1/completions')
    throw new InputError(
      'openai_route',
      `unknown route ${JSON.stringify(route)}; this worker serves /v1/chat/completions, /v1/completions and /v1/models`,
      'route_not_found',
    );
  const s = readSettings(body);
  let promptIds: number[];
  let prompt = '';
  if (chat) promptIds = m.chatPrompt(readMessages(body['messages']));
  else {
    const p = body['prompt'];
    prompt = Array.isArray(p) ? String(p[0] ?? '') : typeof p === 'string' ? p : '';
    if (!prompt) throw new InputError('prompt', 'must be a non-empty string');
    promptIds = m.textPrompt(prompt);
  }
  m.fit(promptIds, s, chat ? undefined : COMPLETIONS_DEFAULT_MAX_TOKENS); // refuse before the first chunk
  const base = { id: `${chat ? 'chatcmpl' : 'cmpl'}-${job.id}`, created: Math.floor(Date.now() / 1000), model: m.name };
  const echo = !chat && body['echo'] === true ? prompt : '';
  const defaultMax = chat ? undefined : COMPLETIONS_DEFAULT_MAX_TOKENS;

  if (body['stream'] !== true) {
    const results = await m.complete(promptIds, s, defaultMax, job);
    return chat
      ? {
          ...base,
          object: 'chat.completion',
          choices: results.map((r, index) => ({
            index,
            message: { role: 'assistant', content: r.text },
            logprobs: null,
            finish_reason: finish(r),
          })),
          usage: usageOf(results),
        }
      : {
          ...base,
          object: 'text_completion',
          choices: results.map((r, index) => ({
            index,
            text: echo + r.text,
            logprobs: null,
            finish_reason: finish(r),
          })),
          usage: usageOf(results),
        };
  }

  const object = chat ? 'chat.completion.chunk' : 'text_completion';
  const chunk = (index: number, text: string, reason: string | null, first = false) => ({
    ...base,
    object,
    choices: [
      chat
        ? {
            index,
            delta: first ? { role: 'assistant', content: text } : reason ? {} : { content: text },
            logprobs: null,
            finish_reason: reason,
          }
        : { index, text, logprobs: null, finish_reason: reason },
    ],
  });
  const q = new ChunkQueue<unknown>();
  for (let i = 0; i < s.n; i++) if (chat || echo) q.push(chunk(i, echo, null, chat));
  const done = m.complete(promptIds, s, defaultMax, job, (i, text) => q.push(chunk(i, text, null)));
  done.then(
    (results) => {
      results.forEach((r, i) => q.push(chunk(i, '', finish(r))));
      q.close();
    },
    (err: unknown) => q.fail(err),
  );
  yield* q;
  const results = await done;
  const usage = usageOf(results);
  const so = body['stream_options'] as Body | undefined;
  if (so?.['include_usage'] === true) yield { ...base, object, choices: [], usage };
  // The whole answer, for /status readers of the job (the SSE client already has it).
  return {
    ...base,
    object: chat ? 'chat.completion' : 'text_completion',
    choices: results.map((r, index) =>
      chat
        ? { index, message: { role: 'assistant', content: r.text }, logprobs: null, finish_reason: finish(r) }
        : { index, text: echo + r.text, logprobs: null, finish_reason: finish(r) },
    ),
    usage,
  };
}
