import type { Job } from '@berth/worker';
import type { GenerateRequest, GenerateResult } from './engine/batch-engine.js';
import type { TextTokenizer } from './load.js';
import { InputError, type ChatMessage, type SamplingSettings } from './params.js';

/** The batching engine, in this thread (`BatchEngine`) or in an engine thread (`ThreadEngine`). */
export interface TextEngine {
  generate(req: GenerateRequest): Promise<GenerateResult>;
  /** Sequences decoding or waiting. */
  readonly load: number;
}

/** A loaded model behind the batching engine: prompts in, completions out (n per request). */
export class TextModel {
  constructor(
    readonly engine: TextEngine,
    readonly tokenizer: TextTokenizer,
    readonly contextLength: number,
    /** Id reported in responses and by /models. */
    readonly name: string,
    /** Unix seconds when the model was loaded. */
    readonly created = Math.floor(Date.now() / 1000),
  ) {}

  /** Token ids of a chat through the model's chat template, ready for the assistant's reply. */
  chatPrompt(messages: ChatMessage[]): number[] {
    const text = this.tokenizer.apply_chat_template(messages, { add_generation_prompt: true, tokenize: false });
    return this.tokenizer.encode(text, { add_special_tokens: false });
  }

  /** Token ids of a plain prompt (with the model's start token when it uses one). */
  textPrompt(prompt: string): number[] {
    return this.tokenizer.encode(prompt);
  }

  /** The number of tokens to generate; throws `context_length_exceeded` when the prompt leaves no room. */
  fit(promptIds: number[], s: SamplingSettings, defaultMaxTokens: number | undefined): number {
    const room = this.contextLength - promptIds.length;
    if (room < 1)
      throw new InputError(
        'messages',
        `the prompt has ${promptIds.length} tokens; this model's context is ${this.contextLength} tokens`,
        'context_length_exceeded',
      );
    return Math.min(s.maxTokens ?? defaultMaxTokens ?? room, room);
  }

  /**
   * Generates `s.n` completions of one prompt concurrently (they share forward passes). `onDelta(i, text)`
   * receives each choice's new text as it is made. Choice `i` uses seed `seed + i`.
   */
  async complete(
    promptIds: number[],
    s: SamplingSettings,
    defaultMaxTokens: number | undefined,
    job: Pick<Job, 'signal' | 'log'>,
    onDelta?: (index: number, text: string) => void,
  ): Promise<GenerateResult[]> {
    const maxTokens = this.fit(promptIds, s, defaultMaxTokens);
    const seed = s.seed ?? Math.floor(Math.random() * 2 ** 31);
    const signal = job.signal;
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: s.n }, (_, i) =>
        this.engine.generate({
          promptIds,
          maxTokens,
          temperature: s.temperature,
          topP: s.topP,
          stop: s.stop,
          seed: (seed + i) | 0,
          signal,
          ...(onDelta ? { onDelta: (text: string) => onDelta(i, text) } : {}),
        }),
      ),
    );
    const ms = performance.now() - started;
    const tokens = results.reduce((n, r) => n + r.completionTokens, 0);
    job.log.info('generated', {
      promptTokens: promptIds.length,
      completionTokens: tokens,
      finish: results.map((r) => r.finishReason).join(','),
      ms: Math.round(ms),
      tokensPerSecond: Math.round(tokens / Math.max(ms / 1000, 1e-3)),
      engineLoad: this.engine.load,
    });
    return results;
  }
}

/** OpenAI `usage` of a set of choices of one prompt. */
export function usageOf(results: GenerateResult[]): {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
} {
  const prompt = results[0]?.promptTokens ?? 0;
  const completion = results.reduce((sum, r) => sum + r.completionTokens, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
