/**
 * Throw this from a handler when retrying the job cannot help (bad input, a model that cannot load this
 * request). The job fails with the error's message.
 *
 * Today every failure is final, so this behaves like any other thrown error; it marks the intent so the runtime
 * can skip retries once the control plane retries failed jobs automatically.
 *
 * @example
 * start({
 *   handler: async (job) => {
 *     if (typeof job.input.prompt !== 'string') throw new UnrecoverableError('input.prompt must be a string');
 *     return generate(job.input.prompt);
 *   },
 * });
 */
export class UnrecoverableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnrecoverableError';
  }
}
