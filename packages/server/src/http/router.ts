/**
 * The one path matcher of the HTTP API: a trie of path segments (the route table, `route-table.ts`, is loaded
 * into it once). A pattern's segments are literal (`run`), a parameter (`:ep`: any one segment, even empty) or,
 * last, a tail (`*name`: the rest of the path, one segment or more, slashes included). Literal segments are tried
 * first, then the parameter, then the tail, backing out of a branch that does not reach a route: `/v2/_worker/jobs`
 * (no tail) falls back to `/v2/:ep/:op`. Written by hand rather than taken from a router package: it keeps the
 * API's own rules (an empty segment is a value, no trailing-slash or case folding), and it measures as fast
 * (`scripts/bench-routing.ts`).
 */

/** The routes of one path pattern: by method, `*` for every method not listed. */
export interface PathRoutes<R> {
  readonly byMethod: ReadonlyMap<string, R>;
  /** The route every method reaches (patterns added with method `*`). */
  readonly any: R | undefined;
  /** The methods listed, in the order added (the `Allow` header of a 405). */
  readonly allow: readonly string[];
  /** The first route added (a pattern added with no methods is still a route of its path: a fallback). */
  readonly first: R;
}

export interface Match<R> {
  routes: PathRoutes<R>;
  /** The pattern's parameters and tail by name. */
  params: Record<string, string>;
  /** The path split at `/` (`segments[0]` is '' : paths start with `/`). */
  segments: string[];
  /** The name of the pattern's tail (`*name`), if it has one. */
  tail: string | undefined;
}

interface Node<R> {
  literal: Map<string, Node<R>>;
  param?: { name: string; node: Node<R> };
  tail?: { name: string; routes: MutableRoutes<R> };
  routes?: MutableRoutes<R>;
}

interface MutableRoutes<R> {
  byMethod: Map<string, R>;
  any: R | undefined;
  allow: string[];
  first: R;
}

const newNode = <R>(): Node<R> => ({ literal: new Map() });

export class Router<R> {
  readonly #root: Node<R> = newNode();

  /** Adds `route` for `methods` (`*`: every method) on `pattern` (e.g. `/v2/:ep/status/:job_id`). */
  add(methods: readonly string[] | '*', pattern: string, route: R): void {
    if (!pattern.startsWith('/')) throw new Error(`route pattern ${pattern} must start with /`);
    const segs = pattern.split('/').slice(1);
    let node = this.#root;
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i]!;
      if (seg.startsWith('*')) {
        if (i !== segs.length - 1) throw new Error(`route pattern ${pattern}: a tail (*) must come last`);
        node.tail ??= { name: seg.slice(1), routes: newRoutes(route) };
        if (node.tail.name !== seg.slice(1)) throw new Error(`route pattern ${pattern}: tail named differently`);
        addRoutes(node.tail.routes, methods, pattern, route);
        return;
      }
      if (seg.startsWith(':')) {
        const name = seg.slice(1);
        node.param ??= { name, node: newNode() };
        if (node.param.name !== name)
          throw new Error(`route pattern ${pattern}: parameter :${name} where others have :${node.param.name}`);
        node = node.param.node;
      } else {
        let next = node.literal.get(seg);
        if (!next) node.literal.set(seg, (next = newNode()));
        node = next;
      }
    }
    node.routes ??= newRoutes(route);
    addRoutes(node.routes, methods, pattern, route);
  }

  /** The routes of `path` (without its query string), or undefined when no pattern matches it. */
  match(path: string): Match<R> | undefined {
    if (path.charCodeAt(0) !== 47 /* / */) return undefined;
    const segments = path.split('/');
    const params: Record<string, string> = {};
    const found = find(this.#root, segments, 1, params);
    return found && { routes: found.routes, params, segments, tail: found.tail };
  }
}

const newRoutes = <R>(first: R): MutableRoutes<R> => ({ byMethod: new Map(), any: undefined, allow: [], first });

function addRoutes<R>(to: MutableRoutes<R>, methods: readonly string[] | '*', pattern: string, route: R): void {
  if (methods === '*') {
    if (to.any !== undefined) throw new Error(`route pattern ${pattern} added twice for every method`);
    to.any = route;
    return;
  }
  for (const m of methods) {
    if (to.byMethod.has(m)) throw new Error(`route ${m} ${pattern} added twice`);
    to.byMethod.set(m, route);
    to.allow.push(m);
  }
}

function find<R>(
  node: Node<R>,
  segs: readonly string[],
  i: number,
  params: Record<string, string>,
): { routes: PathRoutes<R>; tail: string | undefined } | undefined {
  if (i === segs.length) return node.routes && { routes: node.routes, tail: undefined };
  const seg = segs[i]!;
  const literal = node.literal.get(seg);
  if (literal) {
    const found = find(literal, segs, i + 1, params);
    if (found) return found;
  }
  if (node.param) {
    const found = find(node.param.node, segs, i + 1, params);
    if (found) {
      params[node.param.name] = seg;
      return found;
    }
  }
  if (node.tail) {
    params[node.tail.name] = segs.length === i + 1 ? seg : segs.slice(i).join('/');
    return { routes: node.tail.routes, tail: node.tail.name };
  }
  return undefined;
}
