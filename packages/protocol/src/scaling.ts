import { z } from 'zod';

const count = z.number().int().min(0);

/**
 * Reply of `GET /v2/<endpoint_id>/scaling`: the worker count the endpoint's scaling policy wants now, for an
 * external autoscaler (KEDA's `metrics-api` scaler reads `desiredWorkers` with `targetValue: 1`).
 */
export const ScalingReplySchema = z
  .object({
    endpoint: z.string(),
    desiredWorkers: count,
    minWorkers: count,
    maxWorkers: count,
    scaler: z.enum(['request-count', 'queue-delay']),
    inQueue: count,
    inProgress: count,
    /** Workers connected or starting (draining ones not counted). */
    workers: count,
  })
  .meta({ description: 'Reply of GET /v2/<endpoint_id>/scaling (KEDA metrics-api).' });
export type ScalingReply = z.infer<typeof ScalingReplySchema>;
