/** What a public model does; decides its input fields, defaults, output field and cost formula. */
export type ModelKind = 'image' | 'upscale' | 'audio' | 'video';
export const MODEL_KINDS: readonly ModelKind[] = ['image', 'upscale', 'audio', 'video'];

/**
 * Prices of a public model (any currency; `cost` is a plain number). Every field defaults to 0.
 *
 * - `image`: cost = base + perMegapixelStep x (width x height / 1e6) x num_inference_steps + perUpscale[upscale]
 * - `upscale`: cost = base + perUpscale[scale]
 * - `audio`: cost = base + perThousandChars x (characters of `text` / 1000)
 * - `video`: cost = base + perMegapixelStepFrame x (width x height / 1e6) x num_inference_steps x frames
 */
export interface PriceTable {
  /** Charged for every completed job. */
  base?: number;
  /** Image models: per megapixel of the generated size per inference step. */
  perMegapixelStep?: number;
  /** By upscale factor: the `upscale` option of image models, the `scale` of upscalers. Keys "2" and "4". */
  perUpscale?: Partial<Record<'2' | '4', number>>;
  /** Audio (text-to-speech) models: per 1000 characters of `text`. */
  perThousandChars?: number;
  /** Video models: per megapixel of the frame size per inference step per frame. */
  perMegapixelStepFrame?: number;
}

/**
 * Input limits and defaults of a model (fields the control plane fills in before the job is queued). Image and
 * video models use the size, step and guidance fields; video models also the frame and fps fields; audio models
 * `maxTextChars`.
 */
export interface ImageLimits {
  /** Default 512. */
  defaultWidth: number;
  /** Default 512. */
  defaultHeight: number;
  /** Smallest width and height. Default 64. */
  minSize: number;
  /** Largest width and height (before `upscale`). Default 1024. */
  maxSize: number;
  /** Width and height must be multiples of this (the VAE scale factor). Default 8. */
  sizeMultiple: number;
  /** Default 20. */
  defaultSteps: number;
  /** Default 100. */
  maxSteps: number;
  /** Default 5. */
  defaultGuidance: number;
  /** Default 30. */
  maxGuidance: number;
  /** Longest `prompt` / `negative_prompt`, characters. Default 2000. */
  maxPromptChars: number;
  /** Video: default number of frames. Default 8. */
  defaultFrames: number;
  /** Video: most frames per clip. Default 48. */
  maxFrames: number;
  /** Video: default frames per second. Default 8. */
  defaultFps: number;
  /** Video: highest frames per second. Default 30. */
  maxFps: number;
  /** Audio: longest `text`, characters. Default 1000. */
  maxTextChars: number;
}

/** One public model as the operator configures it (`models` in `berth.config.json`, `ServerOptions.models`). */
export interface ModelConfig {
  /** The endpoint whose workers run it. */
  endpoint: string;
  kind: ModelKind;
  /** One line shown to users. */
  description?: string;
  price?: PriceTable;
  /** Image, video and audio models; each field optional (defaults in `ImageLimits`). */
  limits?: Partial<ImageLimits>;
}

/** A model after validation and defaults. */
export interface PublicModel {
  slug: string;
  endpoint: string;
  kind: ModelKind;
  description: string;
  price: Required<Omit<PriceTable, 'perUpscale'>> & { perUpscale: Partial<Record<'2' | '4', number>> };
  limits: ImageLimits;
}

export const DEFAULT_IMAGE_LIMITS: ImageLimits = {
  defaultWidth: 512,
  defaultHeight: 512,
  minSize: 64,
  maxSize: 1024,
  sizeMultiple: 8,
  defaultSteps: 20,
  maxSteps: 100,
  defaultGuidance: 5,
  maxGuidance: 30,
  maxPromptChars: 2000,
  defaultFrames: 8,
  maxFrames: 48,
  defaultFps: 8,
  maxFps: 30,
  maxTextChars: 1000,
};
