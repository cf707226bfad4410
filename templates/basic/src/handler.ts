import type { Handler } from '@berth/worker';
import { z } from 'zod';

/** What a job's `input` must look like. A job with anything else fails with a message naming the field. */
export const Input = z.strictObject({
  name: z.string().min(1).max(100),
  /** How many greetings. */
  times: z.number().int().min(1).max(10).default(1),
});
/** A job's input once `Input` has checked it (defaults applied): `start({ inputSchema: Input })` does that. */
export type Input = z.output<typeof Input>;

/**
 * The handler: runs once per job, with an input `Input` already accepted. Throwing fails the job with the error's
 * message; the return value is the job's `output`. Replace the body with your model call.
 */
export const handler: Handler<Input, { greetings: string[] }> = async (job) => {
  const { name, times } = job.input;
  const greetings: string[] = [];
  for (let i = 1; i <= times; i++) {
    if (job.signal.aborted) throw new Error('cancelled');
    greetings.push(`Hello, ${name}! (${i}/${times})`);
    job.progress({ done: i, of: times });
    job.log.debug('greeted', { i });
  }
  return { greetings };
};
