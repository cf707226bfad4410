// Type tests, checked by `npm run typecheck` (part of `npm test`) and never run: a `@ts-expect-error` line that
// stops being an error, or an `expectTypeOf` that no longer holds, fails the type check.
import { expectTypeOf } from 'vitest';
import { start, z, type Handler, type Job } from './index.js';
import { runJob } from './testing/index.js';

const Input = z.object({ name: z.string(), times: z.number().int().default(1), tags: z.array(z.string()).optional() });

function inputIsInferredFromTheSchema(): void {
  start({
    inputSchema: Input,
    handler: (job) => {
      // The schema's output: defaults applied, so `times` is a number, not `number | undefined`.
      expectTypeOf(job.input).toEqualTypeOf<{ name: string; times: number; tags?: string[] | undefined }>();
      expectTypeOf(job.input.name).toEqualTypeOf<string>();
      // @ts-expect-error not in the schema
      void job.input.prompt;
      return { greeting: `hello ${job.input.name}` };
    },
  });
}

function orderOfPropertiesDoesNotMatter(): void {
  start({
    // The deprecated second argument (the same object as `job`) still gets the inferred input type.
    handler: async function* (job, ctx) {
      expectTypeOf(job.input.times).toEqualTypeOf<number>();
      expectTypeOf(ctx.input.name).toEqualTypeOf<string>();
      yield job.input.name;
    },
    inputSchema: Input,
  });
}

function aHandlerForAnotherInputIsRefused(): void {
  const wants: Handler<{ prompt: string }> = (job) => job.input.prompt;
  // @ts-expect-error the schema gives { name, times, tags }, the handler wants { prompt }
  start({ inputSchema: Input, handler: wants });
  const matches: Handler<z.output<typeof Input>> = (job) => job.input.name;
  start({ inputSchema: Input, handler: matches });
}

function withoutASchemaTheInputStaysUntyped(): void {
  start({
    handler: (job) => {
      expectTypeOf(job.input).toBeAny();
      return job.input.anything;
    },
  });
  // Handlers typed before input schemas existed still fit.
  const typed = (job: Job<{ prompt: string }>) => job.input.prompt.length;
  start({ handler: typed, concurrency: 2 });
  const plain: Handler = (job) => job.input;
  start({ handler: plain });
}

function aDeclaredOutputIsChecked(): void {
  const ok: Handler<{ text: string }, { length: number }> = (job) => ({ length: job.input.text.length });
  const okAsync: Handler<{ text: string }, { length: number }> = async (job) => ({ length: job.input.text.length });
  // @ts-expect-error the declared output is { length: number }
  const wrong: Handler<{ text: string }, { length: number }> = (job) => ({ length: job.input.text });
  start<typeof Input, { n: number }>({
    inputSchema: Input,
    // @ts-expect-error returns a string where { n: number } was declared
    handler: (job) => job.input.name,
  });
  void [ok, okAsync, wrong];
}

async function runJobTakesTheSameInference(): Promise<void> {
  const handler: Handler<z.output<typeof Input>> = (job) => job.input.times;
  // With the schema, the input is what a client sends (`times` may be left out).
  await runJob(handler, { name: 'x' }, { inputSchema: Input });
  // @ts-expect-error `name` is required by the schema
  await runJob(handler, { times: 2 }, { inputSchema: Input });
  await runJob((job: Job<{ a: number }>) => job.input.a, { a: 1 });
}

// Referenced so the checks count as used; they are never called.
void [
  inputIsInferredFromTheSchema,
  orderOfPropertiesDoesNotMatter,
  aHandlerForAnotherInputIsRefused,
  withoutASchemaTheInputStaysUntyped,
  aDeclaredOutputIsChecked,
  runJobTakesTheSameInference,
];

function aBatchHandlerIsTypedLikeAJobHandler(): void {
  start({
    inputSchema: Input,
    batch: { maxSize: 8, maxWaitMs: 5 },
    handler: async (jobs) => {
      expectTypeOf(jobs[0]!.input.times).toEqualTypeOf<number>();
      // @ts-expect-error not in the schema
      void jobs[0]!.input.prompt;
      return jobs.map((j) => (j.input.times > 3 ? new Error('too many') : { greeting: j.input.name }));
    },
  });
  start({
    batch: { maxSize: 4 },
    handler: async function* (jobs) {
      for (const [index, job] of jobs.entries()) yield { index, chunk: job.input.anything };
    },
  });
  // @ts-expect-error a batch handler returns one output per job (an array), not one output
  start({ batch: { maxSize: 4 }, handler: async (jobs: Job[]) => jobs.length });
  // @ts-expect-error maxSize is required
  start({ batch: { maxWaitMs: 4 }, handler: (jobs: Job[]) => jobs });
}
void aBatchHandlerIsTypedLikeAJobHandler;
