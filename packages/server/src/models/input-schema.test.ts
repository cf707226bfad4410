import { describe, expect, it } from 'vitest';
import { checkInput, inputSchemaOf } from './input.js';
import { resolveModels } from './registry.js';
import { MODEL_KINDS } from './types.js';

const models = resolveModels(Object.fromEntries(MODEL_KINDS.map((kind) => [`m-${kind}`, { endpoint: 'ep', kind }])));
type Schema = {
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: boolean;
};
const schemaOf = (kind: string) => inputSchemaOf(models.get(`m-${kind}`)!) as unknown as Schema;

describe('inputSchemaOf', () => {
  it('describes an image model with the limits the check applies', () => {
    const s = schemaOf('image');
    expect(s.required).toEqual(['prompt']);
    expect(s.additionalProperties).toBe(false);
    expect(s.properties['width']).toEqual({ type: 'integer', minimum: 64, maximum: 1024, multipleOf: 8, default: 512 });
    expect(s.properties['output_format']).toEqual({ enum: ['png', 'webp', 'jpeg'], default: 'png' });
    expect(s.properties['prompt']).toMatchObject({
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      description: 'What to draw.',
    });
    expect(s.properties['guidance']).toEqual({ type: 'number', minimum: 0, maximum: 30, default: 5 });
  });

  it('audio, video and upscale name their own fields; an unbounded string has no maxLength', () => {
    expect(schemaOf('audio').properties['voice']).toMatchObject({ type: 'string', pattern: '^[A-Za-z0-9_+/-]+$' });
    expect(schemaOf('video').properties['frames']).toMatchObject({ type: 'integer', minimum: 2, default: 8 });
    expect(schemaOf('upscale').properties['image']).toEqual({
      type: 'string',
      minLength: 1,
      description: 'Image URL or base64 data.',
    });
    expect(schemaOf('upscale').properties['scale']).toEqual({ enum: [2, 4], default: 2 });
  });

  it.each(MODEL_KINDS)("%s: an input built from the schema's defaults and bounds passes the check", (kind) => {
    const s = schemaOf(kind);
    const input: Record<string, unknown> = {};
    for (const name of s.required) input[name] = name === 'image' ? 'data:image/png;base64,AAAA' : 'a red circle';
    for (const [name, p] of Object.entries(s.properties))
      if (p['maximum'] !== undefined && p['default'] === undefined) input[name] = p['maximum'];
    expect(checkInput(models.get(`m-${kind}`)!, input)).toMatchObject({ ok: true });
  });
});
