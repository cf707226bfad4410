import { Tensor } from '@huggingface/transformers';
import type { CausalLM } from '../engine/batch-engine.js';

/** One text to score: token ids, and from which position on they are scored (the context before it is not). */
export interface ScoreItem {
  ids: number[];
  /** Index of the first scored token (at least 1: the first token has nothing before it to predict it from). */
  from: number;
}

export interface ScoreResult {
  /** Log-probability (natural log) of each scored token given every token before it. */
  tokenLogprobs: number[];
}

/** Most padded tokens in one forward pass (bounds its memory): bigger batches are split. */
export const SCORE_PASS_TOKENS = 8192;

/**
 * Scores many texts with a causal LM, in as few forward passes as fit `SCORE_PASS_TOKENS`: the sequences are
 * right-padded to the longest of their pass and masked out, so each token sees exactly the tokens before it (causal
 * attention never looks at the padding after it) and its log-probability is the one it has alone.
 *
 * @example
 * const [r] = await scoreMany(model, [{ ids: [1, 403, 407], from: 1 }]);
 * r.tokenLogprobs; // [-2.1, -0.3]
 */
export async function scoreMany(model: CausalLM, items: readonly ScoreItem[]): Promise<ScoreResult[]> {
  const results: ScoreResult[] = [];
  let start = 0;
  while (start < items.length) {
    let end = start + 1;
    let width = items[start]!.ids.length;
    while (end < items.length) {
      const w = Math.max(width, items[end]!.ids.length);
      if ((end - start + 1) * w > SCORE_PASS_TOKENS) break;
      width = w;
      end++;
    }
    results.push(...(await scorePass(model, items.slice(start, end), width)));
    start = end;
  }
  return results;
}

async function scorePass(model: CausalLM, items: readonly ScoreItem[], width: number): Promise<ScoreResult[]> {
  const k = items.length;
  const ids = new BigInt64Array(k * width);
  const mask = new BigInt64Array(k * width);
  items.forEach((item, b) =>
    item.ids.forEach((id, i) => {
      ids[b * width + i] = BigInt(id);
      mask[b * width + i] = 1n;
    }),
  );
  const inputs: Record<string, unknown> = {
    input_ids: new Tensor('int64', ids, [k, width]),
    attention_mask: new Tensor('int64', mask, [k, width]),
  };
  const session = model.sessions['model'] ?? Object.values(model.sessions)[0];
  // 0 keeps the logits of every position (models exported with this input keep only the last by default).
  if (session?.inputNames.includes('num_logits_to_keep')) inputs['num_logits_to_keep'] = new Tensor('int64', [0n], []);
  const out = await model.forward(inputs);
  const logits = out['logits']!.type === 'float32' ? out['logits']! : out['logits']!.to('float32');
  const [, seq, vocab] = logits.dims as [number, number, number];
  const data = logits.data as Float32Array;
  return items.map((item, b) => {
    const tokenLogprobs: number[] = [];
    // The logits at position i - 1 predict token i.
    for (let i = Math.max(item.from, 1); i < item.ids.length; i++) {
      const row = data.subarray((b * seq + i - 1) * vocab, (b * seq + i) * vocab);
      tokenLogprobs.push(logSoftmaxAt(row, item.ids[i]!));
    }
    return { tokenLogprobs };
  });
}

/** log(softmax(row)[index]), computed stably. */
function logSoftmaxAt(row: Float32Array, index: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const x of row) if (x > max) max = x;
  let sum = 0;
  for (const x of row) sum += Math.exp(x - max);
  return row[index]! - max - Math.log(sum);
}
