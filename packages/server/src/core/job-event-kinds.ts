/** What happened to a job: its record changed, stream chunks arrived, or it was deleted. */
export type JobEventKind = 'change' | 'chunk' | 'deleted';
/**
 * What a `chunk` event carries when it can: the chunks just stored and the stream index of the first, so a
 * reader can deliver them without reading them back (see `Store.claimStream`). Remote events whose chunks did
 * not fit in a notification come without it: the reader then reads the store.
 */
export interface ChunkData {
  /** The attempt that produced them (a reader never takes an older attempt's chunks for a newer one's). */
  attempt: number;
  seq: number;
  chunks: unknown[];
}
