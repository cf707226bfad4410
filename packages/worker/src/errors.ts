/**
 * Throw this from a handler when retrying the job cannot help (bad input, a model that cannot load this
 * request). The job fails at once with the error's message: the worker's retry policy (`start({ retry })`) skips
 * it, where any other thrown error is retried up to `retry.attempts` tries.
 *
 * @example
 * start({
 *   retry: { attempts: 3 },
 *   handler: async (job) => {
 *     if (typeof job.input.prompt !== 'string') throw new UnrecoverableError('input.prompt must be a string');
 *     return generate(job.input.prompt); // a throw here is retried
 *   },
 * });
 */
export class UnrecoverableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnrecoverableError';
  }
}
