import { Tensor } from '@huggingface/transformers';
import { Detokenizer, type Decode } from './detokenizer.js';
import { gatherRows, maskTensor, type BatchCache } from './kv-cache.js';
import { createRng, sampleToken } from './sampler.js';

/** The part of a transformers.js causal language model the engine uses. */
export interface CausalLM {
  forward(inputs: Record<string, unknown>): Promise<Record<string, Tensor>>;
  sessions: Record<string, { inputNames: readonly string[] }>;
}

export interface GenerateRequest {
  /** Prompt token ids (chat template already applied). */
  promptIds: number[];
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  topP: number;
  /** Text is cut before the first of these, and generation stops. */
  stop: readonly string[];
  seed: number;
  /** Aborting finishes the sequence at the next step with `finishReason: 'cancelled'`. */
  signal?: AbortSignal;
  /** Called with each piece of new text as soon as it is safe to release (about one call per token). */
  onDelta?: (text: string) => void;
}

export type FinishReason = 'stop' | 'length' | 'cancelled';

export interface GenerateResult {
  text: string;
  finishReason: FinishReason;
  promptTokens: number;
  /** Tokens the model generated (the end-of-sequence token included when it was produced). */
  completionTokens: number;
}

export interface EngineOptions {
  decode: Decode;
  eosTokenIds: readonly number[];
  /** Longest sequence (prompt + generated) the model accepts. */
  contextLength: number;
  /** Most sequences decoded together in one forward pass. Default 16. */
  maxBatch?: number;
}

/** Counters for benchmarks and logs. */
export interface EngineStats {
  forwardPasses: number;
  prefills: number;
  tokens: number;
  /** Largest number of sequences decoded in one pass. */
  maxBatchSeen: number;
}

interface Pending {
  req: GenerateRequest;
  resolve(r: GenerateResult): void;
  reject(e: unknown): void;
}

/** Most padded prompt tokens in one prefill pass (bounds its memory). */
const PREFILL_TOKENS = 8192;

interface Row {
  req: GenerateRequest;
  detok: Detokenizer;
  rng: () => number;
  /** Sampled but not yet fed to the model. */
  next: number;
  generated: number;
  /** Tokens in this row's cache (prompt + fed tokens). */
  cached: number;
  resolve(r: GenerateResult): void;
  reject(e: unknown): void;
}

/**
 * Continuous batching over one causal LM: sequences join the running batch as soon as they arrive (after a
 * prefill pass shared by those that arrived together) and leave when they finish, so concurrent requests share every decoding forward pass. Rows
 * of different lengths are left-padded in a shared key/value cache; position ids follow each row's attention mask.
 */
export class BatchEngine {
  readonly stats: EngineStats = { forwardPasses: 0, prefills: 0, tokens: 0, maxBatchSeen: 0 };
  private readonly pending: Pending[] = [];
  private rows: Row[] = [];
  private cache: BatchCache | undefined;
  private running = false;
  private readonly maxBatch: number;
  private readonly logitsToKeep: boolean;

  constructor(
    private readonly model: CausalLM,
    private readonly options: EngineOptions,
  ) {
    this.maxBatch = options.maxBatch ?? 16;
    const session = model.sessions['model'] ?? Object.values(model.sessions)[0];
    this.logitsToKeep = session?.inputNames.includes('num_logits_to_keep') ?? false;
  }

  /** Sequences decoding right now plus those waiting to join. */
  get load(): number {
    return this.rows.length + this.pending.length;
  }

  generate(req: GenerateRequest): Promise<GenerateResult> {
    if (req.promptIds.length === 0) return Promise.reject(new Error('the prompt is empty'));
    if (req.promptIds.length >= this.options.contextLength) {
      return Promise.reject(
        new Error(
          `the prompt has ${req.promptIds.length} tokens; this model's context is ${this.options.contextLength} tokens`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ req, resolve, reject });
      if (!this.running) {
        // Start on the next microtask, so requests submitted in the same tick share the first prefill.
        this.running = true;
        queueMicrotask(() => void this.loop());
      }
    });
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.pending.length > 0 || this.rows.length > 0) {
        try {
          this.dropCancelled();
          while (this.pending.length > 0 && this.rows.length < this.maxBatch) await this.admit();
          if (this.rows.length > 0) await this.step();
        } catch (err) {
          // A failed pass fails every sequence in it; the engine keeps serving the next ones.
          for (const r of this.rows) r.reject(err);
          this.rows = [];
          this.cache = undefined;
        }
      }
    } finally {
      this.running = false;
    }
  }

  private dropCancelled(): void {
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      if (p.req.signal?.aborted) {
        this.pending.splice(i, 1);
        p.resolve({ text: '', finishReason: 'cancelled', promptTokens: p.req.promptIds.length, completionTokens: 0 });
      }
    }
    if (this.rows.some((r) => r.req.signal?.aborted))
      this.retire(
        this.rows.filter((r) => r.req.signal?.aborted),
        'cancelled',
      );
  }

  /**
   * Prefills waiting sequences together (prompts left-padded to the longest, at most `PREFILL_TOKENS` padded
   * tokens per pass), samples each one's first token and merges their caches into the running batch.
   */
  private async admit(): Promise<void> {
    const group: Pending[] = [];
    let longest = 0;
    while (this.pending.length > 0 && this.rows.length + group.length < this.maxBatch) {
      const next = this.pending[0]!;
      const len = Math.max(longest, next.req.promptIds.length);
      if (group.length > 0 && (group.length + 1) * len > PREFILL_TOKENS) break;
      longest = len;
      group.push(this.pending.shift()!);
    }
    if (group.length === 0) return;
    try {
      await this.prefill(group, longest);
    } catch (err) {
      for (const p of group) p.reject(err);
    }
  }

  private async prefill(group: Pending[], width: number): Promise<void> {
    const k = group.length;
    const ids = new BigInt64Array(k * width);
    const mask = new BigInt64Array(k * width);
    const masks = group.map((p, b) => {
      const n = p.req.promptIds.length;
      const m = new Uint8Array(width);
      for (let i = 0; i < n; i++) {
        ids[b * width + width - n + i] = BigInt(p.req.promptIds[i]!);
        mask[b * width + width - n + i] = 1n;
        m[width - n + i] = 1;
      }
      return m;
    });
    const inputs: Record<string, unknown> = {
      input_ids: new Tensor('int64', ids, [k, width]),
      attention_mask: new Tensor('int64', mask, [k, width]),
    };
    if (this.logitsToKeep) inputs['num_logits_to_keep'] = new Tensor('int64', [1n], []);
    const out = await this.model.forward(inputs);
    this.stats.prefills++;
    const fresh: BatchCache = { tensors: presents(out), mask: masks, length: width };
    const sources = this.cache ? [this.cache, fresh] : [fresh];
    const picks: [number, number][] = this.rows.map((_, i) => [0, i]);
    group.forEach((p, b) => {
      const row: Row = {
        req: p.req,
        detok: new Detokenizer(this.options.decode, p.req.stop),
        rng: createRng(p.req.seed),
        next: 0,
        generated: 0,
        cached: p.req.promptIds.length,
        resolve: p.resolve,
        reject: p.reject,
      };
      if (this.accept(row, lastLogits(out.logits!, b))) return;
      picks.push([sources.length - 1, b]);
      this.rows.push(row);
    });
    this.cache = gatherRows(sources, picks);
  }

  /** One decoding pass over every row of the batch. */
  private async step(): Promise<void> {
    const cache = this.cache!;
    const b = this.rows.length;
    this.stats.maxBatchSeen = Math.max(this.stats.maxBatchSeen, b);
    const inputs: Record<string, unknown> = {
      input_ids: new Tensor(
        'int64',
        BigInt64Array.from(this.rows, (r) => BigInt(r.next)),
        [b, 1],
      ),
      attention_mask: maskTensor(cache.mask, cache.length, 1),
      past_key_values: cache.tensors,
    };
    if (this.logitsToKeep) inputs['num_logits_to_keep'] = new Tensor('int64', [1n], []);
    const out = await this.model.forward(inputs);
    this.stats.forwardPasses++;
    const mask = cache.mask.map((m) => {
      const next = new Uint8Array(m.length + 1);
      next.set(m);
      next[m.length] = 1;
      return next;
    });
    this.cache = { tensors: presents(out), mask, length: cache.length + 1 };
    const done: Row[] = [];
    this.rows.forEach((row, i) => {
      row.cached++;
      if (this.accept(row, lastLogits(out.logits!, i))) done.push(row);
    });
    if (done.length) this.retire(done, undefined);
  }

  /** Samples a row's next token and releases its text; true when the row is finished (and resolved). */
  private accept(row: Row, logits: ArrayLike<number>): boolean {
    const { req } = row;
    const id = sampleToken(logits, { temperature: req.temperature, topP: req.topP, rng: row.rng });
    row.generated++;
    this.stats.tokens++;
    let reason: FinishReason | undefined;
    if (this.options.eosTokenIds.includes(id)) reason = 'stop';
    else {
      const delta = row.detok.push(id);
      if (delta) req.onDelta?.(delta);
      if (row.detok.stopped) reason = 'stop';
      else if (row.generated >= req.maxTokens || row.cached + 1 >= this.options.contextLength) reason = 'length';
    }
    row.next = id;
    if (reason === undefined) return false;
    this.finish(row, reason);
    return true;
  }

  private finish(row: Row, reason: FinishReason): void {
    if (reason !== 'cancelled') {
      const tail = row.detok.finish();
      if (tail) row.req.onDelta?.(tail);
    }
    row.resolve({
      text: row.detok.result,
      finishReason: reason,
      promptTokens: row.req.promptIds.length,
      completionTokens: row.generated,
    });
  }

  /** Removes rows from the batch (resolving them with `reason` unless already resolved) and compacts the cache. */
  private retire(gone: Row[], reason: FinishReason | undefined): void {
    if (reason) for (const r of gone) this.finish(r, reason);
    const keep: [number, number][] = [];
    const rows: Row[] = [];
    this.rows.forEach((r, i) => {
      if (!gone.includes(r)) {
        keep.push([0, i]);
        rows.push(r);
      }
    });
    this.cache = this.cache ? gatherRows([this.cache], keep) : undefined;
    this.rows = rows;
  }
}

/** `present.N.key` outputs renamed to the `past_key_values.N.key` inputs of the next pass. */
function presents(out: Record<string, Tensor>): Record<string, Tensor> {
  const kv: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(out))
    if (name.startsWith('present')) kv[name.replace('present', 'past_key_values')] = t;
  return kv;
}

/** The logits of the last position of batch row `b`, as float32. */
function lastLogits(logits: Tensor, b: number): Float32Array {
  const t = logits.type === 'float32' ? logits : logits.to('float32');
  const [, seq, vocab] = t.dims as [number, number, number];
  const data = t.data as Float32Array;
  const from = (b * seq + seq - 1) * vocab;
  return data.subarray(from, from + vocab);
}
