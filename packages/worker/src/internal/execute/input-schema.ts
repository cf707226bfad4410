import { z } from 'zod';
import type { Logger } from '../../logger.js';

/**
 * A zod (v4) schema of a handler's input, given as `start({ inputSchema })`. Jobs whose input does not match fail
 * before the handler runs, with `invalid_input: <path>: <problem>`; the handler receives the parsed input
 * (defaults applied). The worker announces it to the control plane as JSON Schema (for the playground).
 */
export type InputSchema = z.ZodType<Record<string, unknown>>;

export type InputCheck = { ok: true; input: Record<string, unknown> } | { ok: false; error: string };

/** True when `value` looks like a zod schema (has `safeParse`). */
export function isInputSchema(value: unknown): value is InputSchema {
  return (
    typeof value === 'object' && value !== null && typeof (value as { safeParse?: unknown }).safeParse === 'function'
  );
}

/** Parses a job's input; never throws. */
export function checkJobInput(schema: InputSchema, input: Record<string, unknown>): InputCheck {
  let r: ReturnType<InputSchema['safeParse']>;
  try {
    r = schema.safeParse(input);
  } catch (err) {
    return {
      ok: false,
      error: `invalid_input: the input schema threw: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  if (r.success) {
    const data: unknown = r.data;
    if (typeof data !== 'object' || data === null || Array.isArray(data))
      return { ok: false, error: 'invalid_input: the input schema must produce an object' };
    return { ok: true, input: data as Record<string, unknown> };
  }
  const problems = r.error.issues
    .slice(0, 10)
    .map((i) => `${i.path.length ? `${i.path.map(String).join('.')}: ` : ''}${i.message}`);
  return { ok: false, error: `invalid_input: ${problems.join('; ')}` };
}

/** The schema as JSON Schema (draft 2020-12, input side), or undefined when zod cannot express it. */
export function toInputJsonSchema(schema: InputSchema, log: Logger): Record<string, unknown> | undefined {
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch (err) {
    log.warn('the input schema cannot be shown as JSON Schema; the playground will offer a JSON editor', {
      error: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  }
}
