import type { Job } from '@berth/worker';
import { TextStreamer } from '@huggingface/transformers';
import { z } from 'zod';
import { loadGenerator } from './model.js';

export const Input = z.strictObject({
  prompt: z.string().min(1).max(2000),
  max_new_tokens: z.number().int().min(1).max(256).default(64),
});

/**
 * A streaming handler: each `yield` is a chunk clients read from `/stream` while the job runs; with
 * `return_aggregate_stream` the job's output is the list of chunks. Greedy decoding: the same prompt gives the
 * same text.
 */
export async function* handler(job: Job<z.input<typeof Input>>): AsyncGenerator<{ text: string }> {
  const { prompt, max_new_tokens } = Input.parse(job.input);
  const generator = await loadGenerator();
  // The streamer calls back synchronously for each decoded piece; the generator hands them out as they come.
  const pieces: string[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const streamer = new TextStreamer(generator.tokenizer, {
    skip_prompt: true,
    callback_function: (text: string) => {
      pieces.push(text);
      wake?.();
    },
  });
  const run = generator(prompt, { max_new_tokens, do_sample: false, streamer }).finally(() => {
    finished = true;
    wake?.();
  });
  run.catch(() => {}); // rethrown below
  while (!finished || pieces.length > 0) {
    if (job.signal.aborted) throw new Error('cancelled');
    const text = pieces.shift();
    if (text !== undefined) {
      if (text !== '') yield { text };
      continue;
    }
    await new Promise<void>((r) => (wake = r));
    wake = undefined;
  }
  await run;
}
