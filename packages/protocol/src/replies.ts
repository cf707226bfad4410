import { z } from 'zod';
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from './errors.js';
import { JobStatus, type HealthReply, type PurgeReply, type RunReply, type StreamReply } from './job.js';

// zod schemas of the queue API's replies, for the OpenAPI document (`GET /openapi.json`). The TypeScript
// interfaces in job.ts and errors.ts stay the source for the code; the checks at the end keep both in step.

const count = z.number().int().min(0);

export const RunReplySchema = z
  .object({ id: z.string(), status: z.literal('IN_QUEUE'), token: z.string().optional() })
  .meta({ description: 'Reply of POST /run and /retry; `token` when the request asked for a job token.' });
export const StreamReplySchema = z
  .object({
    id: z.string(),
    status: JobStatus,
    stream: z.array(z.object({ output: z.unknown() })),
    error: z.string().optional(),
  })
  .meta({ description: 'Reply of /stream: the chunks not yet delivered to any reader.' });
export const PurgeReplySchema = z
  .object({ removed: count, status: z.literal('completed') })
  .meta({ description: 'Reply of POST /purge-queue.' });
export const HealthReplySchema = z
  .object({
    jobs: z.object({ completed: count, failed: count, inProgress: count, inQueue: count, retried: count }),
    workers: z.object({
      idle: count,
      initializing: count,
      ready: count,
      running: count,
      throttled: count,
      unhealthy: count,
    }),
    batch: z
      .object({ maxSize: count, batches: count, jobs: count, meanSize: z.number().min(0) })
      .optional()
      .meta({
        description: 'Batch handlers: largest announced batch.maxSize and the batches started (docs/batching.md).',
      }),
    waitingFor: z
      .string()
      .optional()
      .meta({ description: 'Berth, while jobs are queued: why they wait (docs/api.md, "Why a job waits").' }),
    gpus: z
      .array(z.object({ workerId: z.string(), devices: z.array(z.string()) }))
      .optional()
      .meta({
        description: 'Berth, GPU placement (gpusPerWorker): the devices each worker holds (docs/configuration.md).',
      }),
  })
  .meta({ description: 'Reply of GET /health.' });
export const ErrorBodySchema = z
  .object({
    error: z.string(),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
    details: z.unknown().optional(),
  })
  .meta({ description: 'The one error body of every non-OpenAI route (docs/errors.md).' });

// Compile-time: each schema's type and its interface accept each other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same: [
  Same<z.infer<typeof RunReplySchema>, RunReply>,
  Same<z.infer<typeof PurgeReplySchema>, PurgeReply>,
  Same<z.infer<typeof HealthReplySchema>, HealthReply>,
  Same<z.infer<typeof ErrorBodySchema>, ErrorBody>,
  Same<z.infer<typeof StreamReplySchema>['stream'][number]['output'], StreamReply['stream'][number]['output']>,
] = [true, true, true, true, true];
void same;
