import type { Handler } from '@berth/worker';
import { z } from 'zod';

/** What a job's `input` must look like. A job with anything else fails with a message naming the field. */
export const Input = z.strictObject({
  name: z.string().min(1).max(100),
  /** How many greetings. */
  times: z.number().int().min(1).max(10).default(1),
});

/**
 * The handler: runs once per job. Throwing fails the job with the error's message; the return value is the
 * job's `output`. Replace the body with your model call.
 */
export const handler: Handler = async (job) => {
  const { name, times } = Input.parse(job.input);
  const greetings: string[] = [];
  for (let i = 1; i <= times; i++) {
    if (job.signal.aborted) throw new Error('cancelled');
    greetings.push(`Hello, ${name}! (${i}/${times})`);
    job.progress({ done: i, of: times });
    job.log.debug('greeted', { i });
  }
  return { greetings };
};
