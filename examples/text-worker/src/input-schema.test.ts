import { z } from '@berth/worker';
import { describe, expect, it } from 'vitest';
import { TextInput } from './input-schema.js';

// The text worker announces TextInput (issue #19: the flagship text endpoint showed a blank {} in the playground).
describe('TextInput (the schema the text worker announces)', () => {
  it('is a form: prompt, max_tokens, temperature, top_p, seed, n, stream', () => {
    const schema = z.toJSONSchema(TextInput, { io: 'input' }) as { properties: Record<string, { type?: string }> };
    expect(Object.keys(schema.properties)).toEqual([
      'prompt',
      'max_tokens',
      'temperature',
      'top_p',
      'seed',
      'n',
      'stream',
    ]);
    expect(schema.properties['max_tokens']).toMatchObject({ type: 'integer', minimum: 1 });
  });

  it('lets the OpenAI route and chat inputs through untouched; refuses an out-of-range plain setting', () => {
    const openai = {
      openai_route: '/v1/chat/completions',
      openai_input: { messages: [{ role: 'user', content: 'hi' }] },
    };
    expect(TextInput.parse(openai)).toEqual(openai);
    expect(TextInput.parse({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 })).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 5,
    });
    expect(TextInput.safeParse({ prompt: 'x', temperature: 3 }).success).toBe(false);
  });
});
