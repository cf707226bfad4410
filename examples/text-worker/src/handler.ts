import type { Handler, Job } from '@berth/worker';
import { ChunkQueue } from './chunk-queue.js';
import type { GenerateResult } from './engine/batch-engine.js';
import { openAiJob } from './openai.js';
import { InputError, readMessages, readSettings } from './params.js';
import type { TextModel } from './text-model.js';

/** Plain `/run` inputs default to this many new tokens. */
export const PLAIN_DEFAULT_MAX_TOKENS = 128;

/**
 * The text worker's handler (an async generator, so tokens can stream):
 *
 * - `{openai_route, openai_input}`: OpenAI chat/completions/models (see `openai.ts`). A bad request answers
 *   `{error: {message, code, param}}`, which Berth's OpenAI route turns into a 400.
 * - anything else: `{prompt | messages, max_tokens?, temperature?, top_p?, stop?, seed?, n?, stream?}` answers
 *   `{text: [...], input_tokens, output_tokens}` (one text per choice). With `stream: true` each piece of text
 *   is also yielded as `{index, text}` for `/stream` readers.
 */
export function createTextHandler(m: TextModel): Handler {
  return async function* textHandler(job: Job<Record<string, unknown>>) {
    const input = job.input;
    if (typeof input['openai_route'] === 'string') {
      const body = input['openai_input'];
      try {
        return yield* openAiJob(
          m,
          job,
          input['openai_route'],
          typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {},
        );
      } catch (err) {
        if (err instanceof InputError)
          return { error: { message: err.message, type: 'invalid_request_error', param: err.param, code: err.code } };
        throw err;
      }
    }
    const s = readSettings(input);
    let ids: number[];
    if (input['messages'] !== undefined) ids = m.chatPrompt(readMessages(input['messages']));
    else if (typeof input['prompt'] === 'string' && input['prompt'] !== '') ids = m.textPrompt(input['prompt']);
    else
      throw new InputError(
        'prompt',
        'input needs "prompt" (a non-empty string) or "messages", e.g. {"prompt": "Once upon a time", "max_tokens": 50}',
      );
    const output = (results: GenerateResult[]) => ({
      text: results.map((r) => r.text),
      input_tokens: ids.length,
      output_tokens: results.reduce((n, r) => n + r.completionTokens, 0),
    });
    m.fit(ids, s, PLAIN_DEFAULT_MAX_TOKENS);
    if (input['stream'] !== true) return output(await m.complete(ids, s, PLAIN_DEFAULT_MAX_TOKENS, job));
    const q = new ChunkQueue<{ index: number; text: string }>();
    const done = m.complete(ids, s, PLAIN_DEFAULT_MAX_TOKENS, job, (index, text) => q.push({ index, text }));
    done.then(
      () => q.close(),
      (err: unknown) => q.fail(err),
    );
    yield* q;
    return output(await done);
  };
}
