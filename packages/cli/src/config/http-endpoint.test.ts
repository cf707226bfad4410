import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from './index.js';

const file = join(tmpdir(), 'berth.config.json');

function problems(value: unknown): string[] {
  try {
    resolveConfig(value, file);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('"type": "http" endpoints (load-balancing)', () => {
  it('a command or an image; its proxy settings as createServer takes them, defaults left to the server', () => {
    const config = resolveConfig(
      {
        endpoints: {
          gen: {
            type: 'http',
            command: 'python3 -m uvicorn app:app --port $PORT',
            maxWorkers: 3,
            concurrency: 4,
            healthPath: '/health',
            requestTimeoutMs: 60_000,
            maxBodyBytes: 1_000_000,
            coldStartWaitMs: 30_000,
            affinityWaitMs: 10_000,
          },
          img: { type: 'http', image: 'my/lb:1', maxWorkers: 2 },
          queue: { worker: './h.ts' },
        },
      },
      file,
    );
    const [gen, img, queue] = config.endpoints;
    expect(gen).toMatchObject({
      command: ['python3', '-m', 'uvicorn', 'app:app', '--port', '$PORT'],
      minWorkers: 0,
      maxWorkers: 3,
      http: {
        concurrency: 4,
        healthPath: '/health',
        requestTimeoutMs: 60_000,
        maxBodyBytes: 1_000_000,
        coldStartWaitMs: 30_000,
        affinityWaitMs: 10_000,
      },
    });
    expect(img).toMatchObject({ image: 'my/lb:1', http: {}, worker: file });
    expect(queue!.http).toBeUndefined();
  });

  it('clear errors: no command nor image, a handler file, http fields on a queue endpoint, bad values', () => {
    expect(problems({ endpoints: { a: { type: 'http' } } })).toEqual([
      'endpoints.a.command: a "type": "http" endpoint needs "command" (berth dev) or "image" (berth serve --scale docker)',
    ]);
    expect(problems({ endpoints: { a: { type: 'http', worker: './h.ts' } } })[0]).toMatch(
      /^endpoints\.a\.worker: a "type": "http" endpoint runs its own HTTP server: give "command"/,
    );
    expect(problems({ endpoints: { a: { worker: './h.ts', healthPath: '/ping' } } })).toEqual([
      'endpoints.a.healthPath: applies to "type": "http" (load-balancing) endpoints only; add "type": "http" or remove it',
    ]);
    expect(problems({ endpoints: { a: { type: 'grpc', command: 'x' } } })[0]).toMatch(
      /^endpoints\.a\.type: must be "queue" .* or "http" .* \(got "grpc"\)/,
    );
    expect(problems({ endpoints: { a: { type: 'http', command: 'x', healthPath: 'ping', maxBodyBytes: 0 } } })).toEqual(
      [
        'endpoints.a.healthPath: must be a path like "/ping" (got "ping")',
        'endpoints.a.maxBodyBytes: must be at least 1 (got 0)',
      ],
    );
  });
});
