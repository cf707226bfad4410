import { BaseStreamer, StoppingCriteria, type TextGenerationPipeline } from '@huggingface/transformers';

/** One prompt of a batch: its own token limit and cancel signal. */
export interface Sequence {
  prompt: string;
  maxNewTokens: number;
  signal: AbortSignal;
}

/**
 * Greedy generation for several prompts at once: the prompts are left-padded into one batch, so each decoding step
 * is one forward pass for all of them; `onText(i, text)` receives each new piece of text of prompt `i` as it is
 * decoded. A sequence stops at the end-of-sequence token, at its own `maxNewTokens`, or when its signal fires; the
 * batch ends when every sequence has stopped. Each text is the one its prompt gives alone.
 *
 * @example
 * await generateMany(generator, [{ prompt: 'Once upon a time', maxNewTokens: 24, signal }], (i, t) => out[i] += t);
 */
export async function generateMany(
  generator: TextGenerationPipeline,
  sequences: readonly Sequence[],
  onText: (index: number, text: string) => void,
): Promise<void> {
  const { tokenizer, model } = generator;
  tokenizer.padding_side = 'left';
  const inputs = tokenizer(
    sequences.map((s) => s.prompt),
    { padding: true },
  );
  const config = model.config as unknown as Record<string, unknown>;
  const eos = new Set([model.generation_config?.eos_token_id ?? config['eos_token_id']].flat().map(Number));
  const rows = sequences.map((s) => ({ seq: s, ids: [] as number[], sent: '', done: s.signal.aborted }));

  // Called with the prompts first, then with each step's new token of every row.
  let prompts = true;
  const streamer = new (class extends BaseStreamer {
    override put(value: bigint[][]): void {
      if (prompts) return void (prompts = false);
      value.forEach(([id], i) => {
        const row = rows[i]!;
        if (row.done) return;
        if (eos.has(Number(id))) return void (row.done = true);
        row.ids.push(Number(id));
        row.done = row.ids.length >= row.seq.maxNewTokens || row.seq.signal.aborted;
        // Release the text decoded so far, except a trailing partial character (a token may end mid-character).
        const text = tokenizer.decode(row.ids, { skip_special_tokens: true });
        const safe = row.done || !text.endsWith('\uFFFD') ? text : text.slice(0, -1);
        if (safe.length > row.sent.length && safe.startsWith(row.sent)) {
          onText(i, safe.slice(row.sent.length));
          row.sent = safe;
        }
      });
    }
    override end(): void {}
  })();
  // Generation stops when every row is done (a finished row keeps decoding, unseen, until then).
  const stopWhenDone = new (class extends StoppingCriteria {
    override _call(): boolean[] {
      return rows.map((r) => r.done || r.seq.signal.aborted);
    }
  })();
  await model.generate({
    ...inputs,
    max_new_tokens: Math.max(...sequences.map((s) => s.maxNewTokens)),
    do_sample: false,
    streamer,
    stopping_criteria: [stopWhenDone],
  } as never);
}
