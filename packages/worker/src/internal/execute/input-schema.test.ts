import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runJob } from '../../testing/index.js';
import { createLogger } from '../../logger.js';
import { checkJobInput, toInputJsonSchema } from './input-schema.js';
import { resolveStartOptions } from '../../options.js';

const schema = z.object({
  prompt: z.string().min(1),
  steps: z.number().int().min(1).max(50).default(20),
  mode: z.enum(['fast', 'slow']).optional(),
});

describe('inputSchema', () => {
  it('fails a mismatching input before the handler runs, naming every bad field', async () => {
    let called = 0;
    const r = await runJob(() => ++called, { prompt: '', steps: 99, extra: 1 }, { inputSchema: schema });
    expect(called).toBe(0);
    expect(r.status).toBe('FAILED');
    expect(r.error).toMatch(/^invalid_input: prompt: .*; steps: .*/);
  });

  it('hands the parsed input (defaults applied) to the handler', async () => {
    const r = await runJob((job) => job.input, { prompt: 'a cat' }, { inputSchema: schema });
    expect(r).toMatchObject({ status: 'COMPLETED', output: { prompt: 'a cat', steps: 20 } });
  });

  it('checkJobInput refuses a schema that does not produce an object', () => {
    expect(checkJobInput(z.string() as never, { a: 1 })).toEqual({
      ok: false,
      error: expect.stringMatching(/^invalid_input:/),
    });
  });

  it('announces the schema as JSON Schema with types, bounds and defaults', () => {
    const js = toInputJsonSchema(schema, createLogger({ level: 'silent' }))!;
    expect(js['type']).toBe('object');
    expect(js['required']).toEqual(['prompt']);
    const props = js['properties'] as Record<string, Record<string, unknown>>;
    expect(props['steps']).toMatchObject({ type: 'integer', minimum: 1, maximum: 50, default: 20 });
    expect(props['mode']).toMatchObject({ enum: ['fast', 'slow'] });
  });

  it('start() refuses an inputSchema that is not a zod schema', () => {
    expect(() => resolveStartOptions({ handler: () => 1, inputSchema: { type: 'object' } as never }, {})).toThrow(
      /inputSchema must be a zod schema/,
    );
  });
});
