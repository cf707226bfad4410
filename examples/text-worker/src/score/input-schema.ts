import { z } from '@berth/worker';

/** The `score` endpoint's input, announced to the control plane (the playground builds its form from it). */
export const ScoreInput = z.strictObject({
  text: z.string().min(1).max(100_000).describe('The text to score.'),
  context: z
    .string()
    .max(100_000)
    .optional()
    .describe('Text before it, not scored: the text is scored as its continuation.'),
  token_logprobs: z.boolean().optional().describe('Also answer each scored token and its log-probability.'),
});
export type ScoreInput = z.output<typeof ScoreInput>;
