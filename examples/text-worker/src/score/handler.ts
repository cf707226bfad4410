import { UnrecoverableError, type BatchHandler, type Job } from '@berth/worker';
import type { LoadedModel } from '../load.js';
import type { ScoreInput } from './input-schema.js';
import { scoreMany, type ScoreItem } from './scorer.js';

export interface ScoreOutput {
  /** Tokens scored (the text's tokens; without context, all but a first token that has no start token before it). */
  tokens: number;
  /** Sum of the scored tokens' log-probabilities (natural log). */
  logprob: number;
  /** `logprob / tokens`: comparable between texts of different lengths. */
  mean_logprob: number;
  /** `exp(-mean_logprob)`. */
  perplexity: number;
  /** With `token_logprobs: true`: each scored token's text and log-probability. */
  token_logprobs?: { token: string; logprob: number }[];
}

/**
 * Token ids of a job's context and text, tokenized together (`context + text`, as the model reads them), and where
 * the scored part starts: after the longest run of leading tokens the context alone tokenizes to (a token that
 * straddles the boundary is scored), or after the model's start token without a context.
 */
export function scoreItem(m: Pick<LoadedModel, 'tokenizer' | 'contextLength'>, input: ScoreInput): ScoreItem {
  const { tokenizer } = m;
  const context = input.context ?? '';
  const ids = tokenizer.encode(context + input.text);
  const before = tokenizer.encode(context);
  let from = 0;
  while (from < before.length && from < ids.length && before[from] === ids[from]) from++;
  if (from >= ids.length) throw new UnrecoverableError('invalid_input: text: has no tokens of its own');
  if (ids.length > m.contextLength)
    throw new UnrecoverableError(
      `context_length_exceeded: context and text are ${ids.length} tokens; this model's context is ${m.contextLength} tokens`,
    );
  return { ids, from: Math.max(from, 1) };
}

/**
 * The `score` endpoint's batch handler: the texts of every job of the batch go through the model together (one
 * forward pass, right-padded), and each job gets its text's log-probability. A job whose text does not fit the
 * context fails alone.
 *
 * @example start({ batch: { maxSize: 16, maxWaitMs: 5 }, inputSchema: ScoreInput, handler: createScoreHandler(loaded) });
 */
export function createScoreHandler(m: Pick<LoadedModel, 'model' | 'tokenizer' | 'contextLength'>) {
  const handler = async (jobs: Job<ScoreInput>[]): Promise<(ScoreOutput | Error)[]> => {
    const outputs: (ScoreOutput | Error)[] = [];
    const picked: number[] = [];
    const items: ScoreItem[] = [];
    jobs.forEach((job, i) => {
      try {
        items.push(scoreItem(m, job.input));
        picked.push(i);
      } catch (err) {
        outputs[i] = err as Error;
      }
    });
    const started = performance.now();
    const results = await scoreMany(m.model, items);
    const ms = Math.round(performance.now() - started);
    results.forEach((r, k) => {
      const i = picked[k]!;
      const job = jobs[i]!;
      const item = items[k]!;
      const logprob = r.tokenLogprobs.reduce((a, b) => a + b, 0);
      const tokens = r.tokenLogprobs.length;
      const out: ScoreOutput = {
        tokens,
        logprob,
        mean_logprob: logprob / tokens,
        perplexity: Math.exp(-logprob / tokens),
      };
      if (job.input.token_logprobs) {
        const scored = item.ids.slice(item.ids.length - tokens);
        out.token_logprobs = scored.map((id, t) => ({
          token: m.tokenizer.decode([id], { skip_special_tokens: false }),
          logprob: r.tokenLogprobs[t]!,
        }));
      }
      job.log.info('scored', { tokens, batch: jobs.length, ms });
      outputs[i] = out;
    });
    return outputs;
  };
  return handler satisfies BatchHandler<ScoreInput, ScoreOutput>;
}
