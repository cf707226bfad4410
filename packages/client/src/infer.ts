/**
 * Types of an endpoint read from its handler (`typeof handler`, a `Handler<I, O>` of `@berth/worker`, imported
 * with `import type` so no worker code reaches the client's bundle) or from an input schema (any Standard Schema:
 * zod 4, valibot, arktype). Written structurally: the client depends on neither package.
 */

/** What `endpoint()` knows of an endpoint: its input, its final output, and its stream chunks. */
export interface EndpointTypes {
  input: unknown;
  output: unknown;
  chunk: unknown;
}

/** Any handler: a function of a job (with `input`) and a context. */
export type AnyHandler = (job: any, ...rest: any[]) => unknown;

/** What `endpoint(id)` assumes without a type: any JSON object in, `unknown` out. */
export type UntypedHandler = (job: { input: Record<string, unknown> }) => unknown;

type IsAny<T> = 0 extends 1 & T ? true : false;
type Iter = Iterator<unknown, unknown> | AsyncIterator<unknown, unknown> | AsyncIterable<unknown> | Iterable<unknown>;

/** A plain or async handler's result (a `Handler<I, O>`'s `HandlerResult<O>` union gives `O`). */
type Plain<R> = R extends PromiseLike<infer X> ? X : R extends Iter ? never : R;
/** A generator's chunk type (async first: an async iterator's `next` would also match `Iterator`'s, as a promise). */
type ChunkOf<R> = R extends AsyncIterator<infer C, unknown> | AsyncIterable<infer C>
  ? C
  : R extends Iterator<infer C, unknown>
    ? C
    : never;
/** A generator's return value, `never` when it returns nothing (the output is then the list of chunks). */
type ReturnOf<R> =
  R extends AsyncIterator<unknown, infer X>
    ? Exclude<X, void>
    : R extends AsyncIterable<unknown>
      ? never
      : R extends Iterator<unknown, infer X>
        ? Exclude<X, void>
        : never;

/** The final output: the handler's result, a generator's return value, or the list of its chunks. */
type OutputOf<R> = [Plain<R> | ReturnOf<R>] extends [never] ? ChunkOf<R>[] : Plain<R> | ReturnOf<R>;

/** The types of an endpoint served by handler `H` (`unknown` where the handler's types say nothing). */
export type HandlerTypes<H extends AnyHandler> =
  IsAny<H> extends true
    ? { input: Record<string, unknown>; output: unknown; chunk: unknown }
    : {
        input: Parameters<H>[0] extends { input: infer I } ? I : Record<string, unknown>;
        output: IsAny<ReturnType<H>> extends true ? unknown : OutputOf<ReturnType<H>>;
        chunk: [ChunkOf<ReturnType<H>>] extends [never] ? unknown : ChunkOf<ReturnType<H>>;
      };

/** The part of a Standard Schema (https://standardschema.dev) the client uses: its types and `validate`. */
export interface SchemaLike<I = unknown> {
  readonly '~standard': {
    readonly validate: (value: unknown) => unknown;
    readonly types?: { readonly input: I; readonly output: unknown } | undefined;
  };
}

/** The input type a schema accepts (before defaults: what the client sends). */
export type SchemaInput<S> = S extends SchemaLike<infer I> ? I : unknown;
