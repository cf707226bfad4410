import { z } from 'zod';
import { describeValue } from '@berth/protocol';
import type { LbEndpointOptions } from '@berth/server';

const ms = (min: number, max: number, what: string) =>
  z
    .number({ error: (i) => `must be a number of ${what} (got ${describeValue(i.input)})` })
    .int({ error: (i) => `must be a whole number (got ${describeValue(i.input)})` })
    .min(min, { error: (i) => `must be at least ${min} (got ${describeValue(i.input)})` })
    .max(max, { error: (i) => `must be at most ${max} (got ${describeValue(i.input)})` });

/** The fields only `"type": "http"` endpoints take (docs/load-balancing.md). */
export const HTTP_ONLY_FIELDS = [
  'healthPath',
  'requestTimeoutMs',
  'maxBodyBytes',
  'coldStartWaitMs',
  'affinityWaitMs',
] as const;

/** Their zod schemas, spread into the endpoint schema. */
export const HttpFields = {
  type: z
    .enum(['queue', 'http'], {
      error: (i) =>
        `must be "queue" (a handler behind the job queue) or "http" (a worker's own HTTP server) (got ${describeValue(i.input)})`,
    })
    .optional(),
  healthPath: z
    .string({ error: (i) => `must be a path like "/ping" (got ${describeValue(i.input)})` })
    .regex(/^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/, {
      error: (i) => `must be a path like "/ping" (got ${describeValue(i.input)})`,
    })
    .optional(),
  requestTimeoutMs: ms(1, 86_400_000, 'ms').optional(),
  maxBodyBytes: ms(1, 1024 * 1024 * 1024, 'bytes').optional(),
  coldStartWaitMs: ms(1, 3_600_000, 'ms').optional(),
  affinityWaitMs: ms(1, 3_600_000, 'ms').optional(),
};

type HttpFieldValues = { [K in keyof typeof HttpFields]?: z.infer<(typeof HttpFields)[K]> } & {
  worker?: string | undefined;
  command?: string | undefined;
  image?: string | undefined;
  concurrency?: number | undefined;
};

/** The problems of an endpoint's kind: http needs a command or an image (no handler file); queue takes no http field. */
export function httpProblems(ep: HttpFieldValues): { path: string; message: string }[] {
  if (ep.type === 'http') {
    if (ep.worker !== undefined)
      return [
        {
          path: 'worker',
          message:
            'a "type": "http" endpoint runs its own HTTP server: give "command" (berth dev, like "python3 -m uvicorn app:app --port $PORT") or "image" (berth serve --scale docker), not "worker"',
        },
      ];
    if (ep.command === undefined && ep.image === undefined)
      return [
        {
          path: 'command',
          message: 'a "type": "http" endpoint needs "command" (berth dev) or "image" (berth serve --scale docker)',
        },
      ];
    return [];
  }
  return HTTP_ONLY_FIELDS.filter((f) => ep[f] !== undefined).map((f) => ({
    path: f,
    message: `applies to "type": "http" (load-balancing) endpoints only; add "type": "http" or remove it`,
  }));
}

/** The proxy settings of an http endpoint, for `createServer({ lb })` (defaults applied there). */
export function lbOptions(ep: HttpFieldValues): LbEndpointOptions {
  const o: LbEndpointOptions = {};
  if (ep.concurrency !== undefined) o.concurrency = ep.concurrency;
  if (ep.healthPath !== undefined) o.healthPath = ep.healthPath;
  if (ep.requestTimeoutMs !== undefined) o.requestTimeoutMs = ep.requestTimeoutMs;
  if (ep.maxBodyBytes !== undefined) o.maxBodyBytes = ep.maxBodyBytes;
  if (ep.coldStartWaitMs !== undefined) o.coldStartWaitMs = ep.coldStartWaitMs;
  if (ep.affinityWaitMs !== undefined) o.affinityWaitMs = ep.affinityWaitMs;
  return o;
}
