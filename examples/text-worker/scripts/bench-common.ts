/**
 * What the text worker's benchmark scripts share (bench.ts, scripts/stream-ab.ts, scripts/stream-cpu.ts): the
 * prompts, a prompt as the chat template's token ids, and `berth dev` on the text worker with no end-of-sequence
 * token (so every request makes exactly the tokens asked for, comparable with the in-process engine).
 */
import { join } from 'node:path';
import { startBerthDev, type BerthDev } from '../../../tests/e2e/harness.test-helpers.js';
import type { GenerateRequest } from '../src/engine/batch-engine.js';
import type { TextTokenizer } from '../src/load.js';
import { MODELS_DIR, REPO_ROOT } from '../src/testing.test-helpers.js';

export const PROMPTS = [
  'Once upon a time',
  'Tom had a red ball',
  'The sun was hot',
  'Lily saw a cat',
  'One day, a bird',
];

/** `prompt` as one user message through the model's chat template, as token ids (what the OpenAI route sends). */
export function chatIds(tokenizer: TextTokenizer, prompt: string): number[] {
  return tokenizer.encode(
    tokenizer.apply_chat_template([{ role: 'user', content: prompt }], {
      add_generation_prompt: true,
      tokenize: false,
    }),
    { add_special_tokens: false },
  );
}

/**
 * Request `i` of a benchmark: prompt `i` (of five, in turn), `tokens` long with temperature 1 and seed `i`. With no
 * end-of-sequence token every request makes exactly `tokens` tokens, comparable everywhere.
 */
export function benchRequest(
  tokenizer: TextTokenizer,
  i: number,
  tokens: number,
  extra: Partial<GenerateRequest> = {},
): GenerateRequest {
  return {
    promptIds: chatIds(tokenizer, PROMPTS[i % PROMPTS.length]!),
    maxTokens: tokens,
    temperature: 1,
    topP: 1,
    stop: [],
    seed: i,
    ...extra,
  };
}

/** `berth dev` on examples/text-worker, logs at warn, EOS ignored, one onnxruntime thread unless `env` says else. */
export function startTextDev(env: Record<string, string> = {}): Promise<BerthDev> {
  return startBerthDev({
    config: join(REPO_ROOT, 'examples/text-worker/berth.config.json'),
    env: {
      BERTH_MODELS_DIR: MODELS_DIR,
      BERTH_LOG_LEVEL: 'warn',
      BERTH_TEXT_IGNORE_EOS: '1',
      BERTH_TEXT_THREADS: '1',
      ...env,
    },
    waitForWorkers: ['text'],
  });
}
