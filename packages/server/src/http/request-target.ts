/** A request target (`req.url`) split into the path and the query string, as `new URL(target, base)` splits it. */
export interface RequestTarget {
  path: string;
  /** The query string without `?` ('' when there is none). */
  search: string;
}

/** Paths `new URL` leaves exactly as they are: no dot segments, percent escapes, backslashes, `//` or spaces. */
const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9\-_~!$&'()*+,;=:@/.]*$/;
/** Queries `URLSearchParams` reads the same with or without `new URL` first: no fragment, controls or spaces. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point (they make a query not plain)
const PLAIN_QUERY = /^[^#\x00-\x20\x7f]*$/;

/**
 * Splits `target` without building a `URL` (a visible share of the per-request CPU) when its path and query are
 * plain (what every client of the API sends); anything else goes through `new URL`, whose normalisation
 * (dot segments, `%2e`, `\`, fragments) stays the reference.
 */
export function splitTarget(target: string): RequestTarget {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const search = q < 0 ? '' : target.slice(q + 1);
  if (PLAIN_PATH.test(path) && !path.includes('/.') && PLAIN_QUERY.test(search)) return { path, search };
  const url = new URL(target, 'http://localhost');
  return { path: url.pathname, search: url.search.slice(1) };
}
