// Type tests, checked by tsc (`npm run typecheck`) and run by vitest: what endpoint() infers from a handler's type
// (a type-only import, as users write it) or an input schema, and the client's wire types against @berth/protocol's.
import type { ErrorCode, HealthReply, JobObject, PurgeReply, RunReply } from '@berth/protocol';
import type { Handler, Job as WorkerJob } from '@berth/worker';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { type ApiErrorCode, createClient, type Health, type Job, type Purged, type Queued } from './index.js';

// Handlers as a worker project declares them (`typeof` of these is all the client sees).
declare const greet: Handler<{ name: string; times?: number }, { greetings: string[] }>;
declare const untypedOutput: Handler<{ prompt: string }>;
declare const story: (job: WorkerJob<{ topic: string }>) => AsyncGenerator<{ token: string }, void>;
declare const counted: (job: WorkerJob<{ n: number }>) => AsyncGenerator<string, { total: number }>;
declare const plain: (job: WorkerJob<{ a: number }>) => Promise<{ sum: number }>;
const Input = z.object({ prompt: z.string(), max: z.number().default(16) });

const berth = createClient({ baseUrl: 'http://127.0.0.1:1/v2', apiKey: 'k' });

describe('types', () => {
  it('a Handler<I, O> types run/runSync input and the job output', () => {
    const ep = berth.endpoint<typeof greet>('greet');
    expectTypeOf(ep.run).parameter(0).toEqualTypeOf<{ name: string; times?: number }>();
    expectTypeOf(ep.runSync).returns.resolves.toEqualTypeOf<Job<{ greetings: string[] }>>();
    expectTypeOf(ep.status).returns.resolves.toEqualTypeOf<Job<{ greetings: string[] }>>();
    expectTypeOf(ep.wait).returns.resolves.toEqualTypeOf<Job<{ greetings: string[] }>>();
    // @ts-expect-error: `name` is required
    void (() => ep.run({ times: 2 }));
    // @ts-expect-error: `name` is a string
    void (() => ep.runSync({ name: 1 }));
  });

  it('a Handler<I> without O: output unknown', () => {
    const ep = berth.endpoint<typeof untypedOutput>('text');
    expectTypeOf(ep.run).parameter(0).toEqualTypeOf<{ prompt: string }>();
    expectTypeOf(ep.status).returns.resolves.toEqualTypeOf<Job<unknown>>();
  });

  it('generators: stream() yields the chunk type; the output is the return value, or the chunk list', () => {
    const s = berth.endpoint<typeof story>('story');
    expectTypeOf(s.stream).returns.toEqualTypeOf<
      AsyncGenerator<{ token: string }, Job<{ token: string }[]>, undefined>
    >();
    const c = berth.endpoint<typeof counted>('counted');
    expectTypeOf(c.stream).returns.toEqualTypeOf<AsyncGenerator<string, Job<{ total: number }>, undefined>>();
    const p = berth.endpoint<typeof plain>('plain');
    expectTypeOf(p.runSync).returns.resolves.toEqualTypeOf<Job<{ sum: number }>>();
    expectTypeOf(p.run).parameter(0).toEqualTypeOf<{ a: number }>();
  });

  it('an input schema types the input (before defaults); the output can be named', () => {
    const ep = berth.endpoint('llm', { input: Input });
    expectTypeOf(ep.run).parameter(0).toEqualTypeOf<{ prompt: string; max?: number | undefined }>();
    const typed = berth.endpoint<typeof Input, { text: string }>('llm', { input: Input });
    expectTypeOf(typed.runSync).returns.resolves.toEqualTypeOf<Job<{ text: string }>>();
  });

  it('no type: any object in, unknown out', () => {
    const ep = berth.endpoint('echo');
    expectTypeOf(ep.run).parameter(0).toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf(ep.status).returns.resolves.toEqualTypeOf<Job<unknown>>();
  });

  it('wire types agree with @berth/protocol, and the error codes are exactly its codes', () => {
    expectTypeOf<ApiErrorCode>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<HealthReply>().toExtend<Health>();
    expectTypeOf<PurgeReply>().toExtend<Purged>();
    expectTypeOf<RunReply>().toExtend<Queued>();
    // Same fields (the server's schema also allows an explicit `undefined`, which JSON never carries).
    expectTypeOf<keyof Job>().toEqualTypeOf<Exclude<keyof JobObject, 'input' | 'webhook'>>();
    expectTypeOf<Job>().toExtend<Omit<JobObject, 'input' | 'webhook'>>();
  });
});
