import { z } from '@berth/worker';
import { MAX_N } from './params.js';

/**
 * The plain `/run` input, announced to the control plane so the playground builds a form (prompt, max_tokens,
 * temperature, ...). Loose: the OpenAI route's `{openai_route, openai_input}` and `messages` pass through to the
 * handler, which checks them (params.ts) with messages naming the field.
 */
export const TextInput = z.looseObject({
  prompt: z.string().optional().describe('The text to continue (or give "messages" for a chat).'),
  max_tokens: z.number().int().min(1).max(1e6).optional().describe('Tokens to generate at most.'),
  temperature: z.number().min(0).max(2).optional().describe('0: always the likeliest token. Default 1.'),
  top_p: z.number().gt(0).max(1).optional().describe('Nucleus sampling. Default 1.'),
  seed: z.number().int().optional().describe('Same seed, same text (with temperature > 0).'),
  n: z.number().int().min(1).max(MAX_N).optional().describe('Texts to generate. Default 1.'),
  stream: z.boolean().optional().describe('Also yield each piece of text for /stream readers.'),
});
