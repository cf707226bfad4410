/**
 * An error as one line of text for a message meant for people (a thrown `Error`'s message, followed by its
 * `cause`'s when it has one; anything else as `String(value)`). To log an error, pass the value itself under `err`
 * (`logger.error('sweep failed', { err })`): JSON lines keep its type, message and stack, pretty lines its message.
 */
export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}
