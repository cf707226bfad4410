import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { schemaRequest } from './sample-input.js';
import { sampleFromSchema } from './schema-sample.js';

/** The JSON Schema a worker announces for a zod schema (what `start({ inputSchema })` sends in its hello). */
const announced = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input' });

describe('sampleFromSchema', () => {
  it("examples/basic/greet.ts's schema: the required name only (defaults are the worker's), and the schema accepts it", () => {
    const schema = z.object({
      name: z.string().min(1).max(100),
      times: z.number().int().min(1).max(10).default(1),
      shout: z.boolean().default(false),
    });
    const sample = sampleFromSchema(announced(schema));
    expect(sample).toEqual({ input: { name: 'hello' }, toFill: [] });
    expect(schema.safeParse(sample!.input).success).toBe(true);
  });

  it('bounds, enums, nested objects, arrays with minItems, nullable fields: a value the schema accepts', () => {
    const schema = z.object({
      prompt: z.string().min(8).max(200),
      code: z.string().max(3),
      width: z.number().int().min(64).max(1024).multipleOf(8),
      ratio: z.number().gt(0.5).lt(2),
      mode: z.enum(['fast', 'slow']),
      tags: z.array(z.string().min(1)).min(2),
      inner: z.object({ steps: z.number().int().min(3), on: z.boolean() }),
      maybe: z.string().min(1).nullable(),
      optional: z.number().optional(),
      fixed: z.literal('v1'),
    });
    const sample = sampleFromSchema(announced(schema))!;
    expect(schema.safeParse(sample.input).error?.issues).toBeUndefined();
    expect(sample.input).toMatchObject({ width: 64, mode: 'fast', inner: { steps: 3, on: false }, fixed: 'v1' });
    expect(sample.input).not.toHaveProperty('optional');
    expect(sample.toFill).toEqual([]);
  });

  it('names the fields a plain value cannot satisfy (pattern, format)', () => {
    const schema = z.object({ url: z.url(), id: z.string().regex(/^[A-Z]{3}-\d+$/), ok: z.string() });
    const sample = sampleFromSchema(announced(schema))!;
    expect(sample.toFill).toEqual(['url', 'id']);
    expect(schemaRequest('shapes', announced(schema))?.note).toBe(
      " (input built from the schema shapes's worker announced; fill in url, id)",
    );
  });

  it('no usable schema (none announced, not an object): undefined, and the banner keeps the generic example', () => {
    expect(sampleFromSchema(null)).toBeUndefined();
    expect(sampleFromSchema({ type: 'string' })).toBeUndefined();
    expect(schemaRequest('echo', undefined)).toBeUndefined();
  });
});
