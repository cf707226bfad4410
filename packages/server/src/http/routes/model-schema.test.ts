import { describe, expect, it } from 'vitest';
import { checkInput } from '../../models/input.js';
import { resolveModels } from '../../models/registry.js';
import { MODEL_KINDS } from '../../models/types.js';
import { modelInputSchema } from './model-schema.js';

describe('modelInputSchema', () => {
  const models = resolveModels(Object.fromEntries(MODEL_KINDS.map((kind) => [`m-${kind}`, { endpoint: 'ep', kind }])));

  it.each(MODEL_KINDS)('%s: names exactly the fields the input check knows, and the same required ones', (kind) => {
    const model = models.get(`m-${kind}`)!;
    const schema = modelInputSchema(model) as { properties: Record<string, unknown>; required: string[] };
    const refused = checkInput(model, { not_a_field: 1 });
    expect(refused.ok).toBe(false);
    const problems = refused.ok ? [] : refused.problems;
    const known = /\(known: ([^)]*)\)/.exec(problems[0] ?? '')?.[1]?.split(', ') ?? [];
    expect(Object.keys(schema.properties).sort()).toEqual(known.sort());
    const required = problems.filter((p) => p.endsWith(': is required')).map((p) => p.split(':')[0]);
    expect(schema.required.sort()).toEqual(required.sort());
  });

  it.each(MODEL_KINDS)('%s: the defaults it shows are the ones the check fills in', (kind) => {
    const model = models.get(`m-${kind}`)!;
    const schema = modelInputSchema(model) as { properties: Record<string, { default?: unknown }>; required: string[] };
    const minimal = Object.fromEntries(schema.required.map((f) => [f, f === 'image' ? 'data:image/png;base64,AAAA' : 'a red circle']));
    const checked = checkInput(model, minimal);
    expect(checked.ok).toBe(true);
    const filled = checked.ok ? checked.input : {};
    for (const [name, p] of Object.entries(schema.properties)) if (p.default !== undefined) expect([name, filled[name]]).toEqual([name, p.default]);
  });
});
