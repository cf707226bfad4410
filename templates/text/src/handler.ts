import type { BatchChunk, BatchHandler, Job } from '@berth/worker';
import { z } from 'zod';
import { generateMany } from './generate.js';
import { loadGenerator } from './model.js';

export const Input = z.strictObject({
  prompt: z.string().min(1).max(2000),
  max_new_tokens: z.number().int().min(1).max(256).default(64),
});

type Chunk = { text: string };

/**
 * The batch handler (a streaming one: an async generator). The prompts of every job of the batch are decoded
 * together, one forward pass per token for all of them; each `yield { index, chunk }` is a chunk that clients of
 * `jobs[index]` read from `/stream` while it runs, and each job's output is the list of its chunks. Greedy decoding:
 * the same prompt gives the same text, alone or in a batch. A job with a bad input fails alone.
 */
export const batchHandler: BatchHandler<z.input<typeof Input>, Chunk[]> = async function* (jobs) {
  const parsed = jobs.map((job) => Input.safeParse(job.input));
  const outputs: (Chunk[] | Error)[] = parsed.map((p) =>
    p.success ? [] : new Error(`invalid_input: ${p.error.issues.map(describeIssue).join('; ')}`),
  );
  const picked = parsed.flatMap((p, i) => (p.success ? [i] : []));
  if (picked.length === 0) return outputs;
  const generator = await loadGenerator();
  // The model calls back synchronously for each piece of text; the generator hands them out as they come.
  const pending: BatchChunk[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const run = generateMany(
    generator,
    picked.map((i) => {
      const { prompt, max_new_tokens } = (parsed[i] as { data: z.output<typeof Input> }).data;
      return { prompt, maxNewTokens: max_new_tokens, signal: jobs[i]!.signal };
    }),
    (k, text) => {
      const chunk = { text };
      (outputs[picked[k]!] as Chunk[]).push(chunk);
      pending.push({ index: picked[k]!, chunk });
      wake?.();
    },
  ).finally(() => {
    finished = true;
    wake?.();
  });
  run.catch(() => {}); // rethrown below
  while (!finished || pending.length > 0) {
    const next = pending.shift();
    if (next) {
      yield next;
      continue;
    }
    await new Promise<void>((r) => (wake = r));
    wake = undefined;
  }
  await run;
  return outputs;
};

/** The same generation for one job (a batch of one), streamed: for `runJob` in tests and typed clients. */
export async function* handler(job: Job<z.input<typeof Input>>): AsyncGenerator<Chunk, Chunk[]> {
  const it = batchHandler([job]) as AsyncGenerator<BatchChunk, (Chunk[] | Error)[]>;
  for (;;) {
    const step = await it.next();
    if (step.done) {
      const out = step.value[0]!;
      if (out instanceof Error) throw out;
      return out;
    }
    yield step.value.chunk as Chunk;
  }
}

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${issue.path.map(String).join('.') || 'input'}: ${issue.message}`;
}
