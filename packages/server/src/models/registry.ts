import { ENDPOINT_ID_RE } from '@berth/protocol';
import { DEFAULT_IMAGE_LIMITS, MODEL_KINDS, type ImageLimits, type ModelConfig, type PublicModel } from './types.js';
import { ConfigError } from '../errors.js';

/** Model slugs: lowercase words (letters and digits) joined by single hyphens, at most 63 characters. */
export const MODEL_SLUG_RE = /^(?=.{1,63}$)[a-z0-9]+(-[a-z0-9]+)*$/;

const bad = (msg: string) => new ConfigError(msg);
const PRICE_FIELDS = ['base', 'perMegapixelStep', 'perUpscale', 'perThousandChars', 'perMegapixelStepFrame'];

/**
 * Checks the operator's model table and applies defaults. A bad entry throws a message naming
 * `models.<slug>.<field>` and the bad value.
 *
 * @example resolveModels({ 'shapes-diffusion': { endpoint: 'image', kind: 'image', price: { perMegapixelStep: 0.0001 } } })
 */
export function resolveModels(models: Record<string, ModelConfig> | undefined): Map<string, PublicModel> {
  const out = new Map<string, PublicModel>();
  for (const [slug, m] of Object.entries(models ?? {})) {
    const at = `option models.${slug}`;
    if (!MODEL_SLUG_RE.test(slug))
      throw bad(
        `option models: "${slug}" is not a valid model slug (lowercase words joined by hyphens, like "shapes-diffusion")`,
      );
    if (typeof m !== 'object' || m === null)
      throw bad(`${at} must be an object like {"endpoint": "image", "kind": "image"}`);
    if (typeof m.endpoint !== 'string' || !ENDPOINT_ID_RE.test(m.endpoint))
      throw bad(`${at}.endpoint must be an endpoint id (got ${JSON.stringify(m.endpoint)})`);
    if (m.endpoint === slug)
      throw bad(`${at}.endpoint must differ from the slug (the slug replaces the endpoint id in URLs)`);
    if (!MODEL_KINDS.includes(m.kind))
      throw bad(`${at}.kind must be one of ${MODEL_KINDS.join(', ')} (got ${JSON.stringify(m.kind)})`);
    if (m.description !== undefined && typeof m.description !== 'string')
      throw bad(`${at}.description must be a string`);
    const p = m.price ?? {};
    const money = (name: string, v: unknown) => {
      if (v === undefined) return 0;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        throw bad(`${at}.price.${name} must be a non-negative number (got ${JSON.stringify(v)})`);
      return v;
    };
    const perUpscale: Partial<Record<'2' | '4', number>> = {};
    for (const [k, v] of Object.entries(p.perUpscale ?? {})) {
      if (k !== '2' && k !== '4') throw bad(`${at}.price.perUpscale: keys are "2" and "4" (got "${k}")`);
      perUpscale[k] = money(`perUpscale.${k}`, v);
    }
    for (const k of Object.keys(p))
      if (!PRICE_FIELDS.includes(k)) throw bad(`${at}.price: unknown field "${k}" (known: ${PRICE_FIELDS.join(', ')})`);
    const limits = resolveLimits(at, m.limits);
    out.set(slug, {
      slug,
      endpoint: m.endpoint,
      kind: m.kind,
      description: m.description ?? '',
      price: {
        base: money('base', p.base),
        perMegapixelStep: money('perMegapixelStep', p.perMegapixelStep),
        perUpscale,
        perThousandChars: money('perThousandChars', p.perThousandChars),
        perMegapixelStepFrame: money('perMegapixelStepFrame', p.perMegapixelStepFrame),
      },
      limits,
    });
  }
  return out;
}

function resolveLimits(at: string, given: Partial<ImageLimits> | undefined): ImageLimits {
  const l: ImageLimits = { ...DEFAULT_IMAGE_LIMITS };
  for (const [k, v] of Object.entries(given ?? {})) {
    if (!(k in DEFAULT_IMAGE_LIMITS))
      throw bad(`${at}.limits: unknown field "${k}" (known: ${Object.keys(DEFAULT_IMAGE_LIMITS).join(', ')})`);
    const isInt = k !== 'defaultGuidance' && k !== 'maxGuidance';
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (isInt && !Number.isInteger(v))) {
      throw bad(`${at}.limits.${k} must be a non-negative ${isInt ? 'whole ' : ''}number (got ${JSON.stringify(v)})`);
    }
    l[k as keyof ImageLimits] = v;
  }
  const check = (ok: boolean, msg: string) => {
    if (!ok) throw bad(`${at}.limits: ${msg}`);
  };
  check(l.sizeMultiple >= 1, 'sizeMultiple must be at least 1');
  check(l.minSize >= 1 && l.minSize <= l.maxSize, 'minSize must be from 1 to maxSize');
  for (const k of ['defaultWidth', 'defaultHeight'] as const) {
    check(
      l[k] >= l.minSize && l[k] <= l.maxSize && l[k] % l.sizeMultiple === 0,
      `${k} (${l[k]}) must be from minSize to maxSize and a multiple of sizeMultiple`,
    );
  }
  check(
    l.maxSteps >= 1 && l.defaultSteps >= 1 && l.defaultSteps <= l.maxSteps,
    'defaultSteps must be from 1 to maxSteps',
  );
  check(l.defaultGuidance <= l.maxGuidance, 'defaultGuidance must be at most maxGuidance');
  check(
    l.maxFrames >= 2 && l.defaultFrames >= 2 && l.defaultFrames <= l.maxFrames,
    'defaultFrames must be from 2 to maxFrames',
  );
  check(l.maxFps >= 1 && l.defaultFps >= 1 && l.defaultFps <= l.maxFps, 'defaultFps must be from 1 to maxFps');
  check(l.maxTextChars >= 1, 'maxTextChars must be at least 1');
  return l;
}
