import type { PublicModel } from './types.js';

const num = (v: unknown, def: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : def);

/**
 * The cost of a job from the model's price table and its (validated, defaulted) input, rounded to 6 decimals:
 *
 * - image: `base + perMegapixelStep * (width * height / 1e6) * num_inference_steps + perUpscale[upscale]`
 * - upscale: `base + perUpscale[scale]`
 * - audio: `base + perThousandChars * text.length / 1000`
 * - video: `base + perMegapixelStepFrame * (width * height / 1e6) * num_inference_steps * frames`
 *
 * @example costOf(model, { width: 512, height: 512, num_inference_steps: 20 }) // 0.001 + 0.0002 * 0.262144 * 20
 */
export function costOf(model: PublicModel, input: Record<string, unknown>): number {
  const p = model.price;
  let cost = p.base;
  if (model.kind === 'image') {
    const mp =
      (num(input['width'], model.limits.defaultWidth) * num(input['height'], model.limits.defaultHeight)) / 1e6;
    cost += p.perMegapixelStep * mp * num(input['num_inference_steps'], model.limits.defaultSteps);
    const up = input['upscale'];
    if (up === 2 || up === 4) cost += p.perUpscale[String(up) as '2' | '4'] ?? 0;
  } else if (model.kind === 'audio') {
    const text = input['text'];
    cost += (p.perThousandChars * (typeof text === 'string' ? text.length : 0)) / 1000;
  } else if (model.kind === 'video') {
    const mp =
      (num(input['width'], model.limits.defaultWidth) * num(input['height'], model.limits.defaultHeight)) / 1e6;
    cost +=
      p.perMegapixelStepFrame *
      mp *
      num(input['num_inference_steps'], model.limits.defaultSteps) *
      num(input['frames'], model.limits.defaultFrames);
  } else {
    const scale = input['scale'] === 4 ? '4' : '2';
    cost += p.perUpscale[scale] ?? 0;
  }
  return Math.round(cost * 1e6) / 1e6;
}
