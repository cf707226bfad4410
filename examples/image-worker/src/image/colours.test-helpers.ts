import sharp from 'sharp';

/** Approximate colours of the tiny-sd training scenes. */
export const PALETTE = {
  red: [220, 40, 40],
  green: [40, 170, 60],
  blue: [40, 60, 220],
  yellow: [235, 215, 40],
  purple: [140, 50, 170],
  orange: [240, 140, 30],
  white: [240, 240, 240],
  black: [20, 20, 20],
  gray: [128, 128, 128],
} as const;
export type ColourName = keyof typeof PALETTE;

export interface Decoded {
  data: Uint8Array;
  width: number;
  height: number;
  format: string;
}

/** Decodes PNG/WebP/JPEG bytes to RGB with sharp, and reports the container format. */
export async function decode(bytes: Uint8Array): Promise<Decoded> {
  const meta = await sharp(bytes).metadata();
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height, format: meta.format ?? 'unknown' };
}

export function nearestColour(r: number, g: number, b: number): ColourName {
  let best: ColourName = 'gray';
  let bestD = Infinity;
  for (const [name, [pr, pg, pb]] of Object.entries(PALETTE) as [ColourName, readonly number[]][]) {
    const d = (r - (pr as number)) ** 2 + (g - (pg as number)) ** 2 + (b - (pb as number)) ** 2;
    if (d < bestD) {
      bestD = d;
      best = name;
    }
  }
  return best;
}

/**
 * Splits an image into background (the colour most common along the border) and shape (every other pixel), and
 * reports the dominant colour and its share in each.
 */
export function analyseScene(img: Decoded): {
  background: ColourName;
  backgroundShare: number;
  shape: ColourName;
  shapeShare: number;
  shapePixels: number;
} {
  const { data, width, height } = img;
  const classes: ColourName[] = [];
  for (let p = 0; p < width * height; p++)
    classes.push(nearestColour(data[p * 3] as number, data[p * 3 + 1] as number, data[p * 3 + 2] as number));
  const border: ColourName[] = [];
  for (let x = 0; x < width; x++)
    border.push(classes[x] as ColourName, classes[(height - 1) * width + x] as ColourName);
  for (let y = 0; y < height; y++)
    border.push(classes[y * width] as ColourName, classes[y * width + width - 1] as ColourName);
  const [background, backgroundBorderCount] = mostCommon(border);
  const shapeClasses = classes.filter((c) => c !== background);
  const [shape, shapeCount] = mostCommon(shapeClasses);
  return {
    background,
    backgroundShare: backgroundBorderCount / border.length,
    shape,
    shapeShare: shapeClasses.length ? shapeCount / shapeClasses.length : 0,
    shapePixels: shapeClasses.length,
  };
}

function mostCommon(values: ColourName[]): [ColourName, number] {
  const counts = new Map<ColourName, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: [ColourName, number] = ['gray', 0];
  for (const entry of counts) if (entry[1] > best[1]) best = entry;
  return best;
}
