import { UnrecoverableError } from '@berth/worker';
import { z } from 'zod';
import { AUDIO_FORMATS } from './encode.js';

/**
 * Bad job input. Fails the job (without retry) with `invalid_input: <field>: <problem>; ...`, the same stable
 * prefix as the control plane's public-model validation and the image worker.
 */
export class InputError extends UnrecoverableError {
  readonly code = 'invalid_input';
  constructor(readonly problems: string[]) {
    super(`invalid_input: ${problems.join('; ')}`);
    this.name = 'InputError';
  }
}

const got = (i: { input: unknown }): string =>
  typeof i.input === 'string'
    ? JSON.stringify(i.input.slice(0, 40))
    : i.input === undefined
      ? 'nothing'
      : (JSON.stringify(i.input) ?? String(i.input));
const range = (min: number, max: number) => ({
  min: { error: (i: { input: unknown }) => `must be from ${min} to ${max} (got ${got(i)})` },
  max: { error: (i: { input: unknown }) => `must be from ${min} to ${max} (got ${got(i)})` },
});

/** Longest `text` the worker accepts (a public model may set a lower `maxTextChars`). */
export const MAX_TEXT_CHARS = 5000;

/**
 * Text-to-speech input. Defaults: the engine's voice (`en-us` for espeak-ng), `speed` 1, `pitch` 50,
 * `output_format` wav. Whether the voice exists is checked against the engine after parsing.
 */
export const TtsInput = z.strictObject(
  {
    text: z
      .string({ error: (i) => `must be a string (got ${got(i)})` })
      .refine((s) => s.trim().length > 0, 'must not be empty')
      .refine((s) => s.length <= MAX_TEXT_CHARS, {
        error: (i) => `must be at most ${MAX_TEXT_CHARS} characters (got ${(i.input as string).length})`,
      }),
    voice: z
      .string({ error: (i) => `must be a string (got ${got(i)})` })
      .regex(/^[A-Za-z0-9_+/-]{1,64}$/, {
        error: (i) => `must be a voice name like "en-us" or "en-us+f3" (got ${got(i)})`,
      })
      .optional(),
    speed: z
      .number({ error: (i) => `must be a number (got ${got(i)})` })
      .min(0.5, range(0.5, 2).min)
      .max(2, range(0.5, 2).max)
      .default(1),
    pitch: z
      .number({ error: (i) => `must be a number (got ${got(i)})` })
      .int({ error: (i) => `must be a whole number (got ${got(i)})` })
      .min(0, range(0, 99).min)
      .max(99, range(0, 99).max)
      .default(50),
    output_format: z
      .enum(AUDIO_FORMATS, { error: (i) => `must be one of ${AUDIO_FORMATS.join(', ')} (got ${got(i)})` })
      .default('wav'),
  },
  { error: (i) => `must be an object like {"text": "Hello"} (got ${got(i)})` },
);
export type TtsInput = z.infer<typeof TtsInput>;

/** Parses `value`, throwing `InputError` naming every bad field; `null` fields count as absent. */
export function parseTtsInput(value: unknown): TtsInput {
  const cleaned =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null))
      : value;
  const parsed = TtsInput.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new InputError(
    parsed.error.issues.map((issue) => {
      if (issue.code === 'unrecognized_keys')
        return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      return `${issue.path.map(String).join('.') || 'input'}: ${issue.message}`;
    }),
  );
}
