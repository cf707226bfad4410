import { start, z } from '@berth/worker';

// A handler with a declared input: bad inputs fail before it runs (`invalid_input: ...`), `job.input` is typed from
// the schema (defaults applied), the playground builds a form from it, and what the handler logs shows up at
// GET /v2/greet/logs/<job_id>.
const inputSchema = z.object({
  name: z.string().min(1).max(100).describe('Who to greet.'),
  times: z.number().int().min(1).max(10).default(1).describe('How many greetings.'),
  shout: z.boolean().default(false),
});

start({
  inputSchema,
  handler: (job) => {
    const { name, times, shout } = job.input;
    job.log.info('greeting', { name, times });
    console.log(`console works too: ${times} greeting(s) for ${name}`);
    const greeting = `Hello, ${name}!`;
    return { greetings: Array.from({ length: times }, () => (shout ? greeting.toUpperCase() : greeting)) };
  },
});
