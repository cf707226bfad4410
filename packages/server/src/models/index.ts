export { createModelRoutes, type ModelRoutes, type ModelRoutesDeps } from './model-routes.js';
export { resolveModels, MODEL_SLUG_RE } from './registry.js';
export { checkInput, AUDIO_FORMATS, OUTPUT_FORMATS, VIDEO_FORMATS } from './input.js';
export { costOf } from './pricing.js';
export {
  DEFAULT_IMAGE_LIMITS,
  MODEL_KINDS,
  type ImageLimits,
  type ModelConfig,
  type ModelKind,
  type PriceTable,
  type PublicModel,
} from './types.js';
