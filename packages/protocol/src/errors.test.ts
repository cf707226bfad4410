import { describe, expect, it } from 'vitest';
import { BerthError, ERROR_STATUS, WS_ERROR_CODES, toErrorBody, type ErrorCode } from './errors.js';
import { ConfigError } from './user-errors.js';

const CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

describe('ERROR_STATUS', () => {
  it.each(CODES)('maps %s to a 4xx or 5xx status', (code) => {
    const status = ERROR_STATUS[code];
    expect(Number.isInteger(status)).toBe(true);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(600);
    expect(new BerthError(code, 'x').status).toBe(status);
  });

  it('uses stable snake_case codes, on HTTP and on the worker socket', () => {
    for (const code of [...CODES, ...WS_ERROR_CODES]) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('holds the codes of the API contract with their statuses', () => {
    expect(ERROR_STATUS).toMatchObject({
      invalid_json: 400,
      invalid_request: 400,
      invalid_wait: 400,
      invalid_ttl: 400,
      stream_not_supported: 400,
      unauthorized: 401,
      forbidden: 403,
      endpoint_not_found: 404,
      job_not_found: 404,
      method_not_allowed: 405,
      job_not_retryable: 409,
      payload_too_large: 413,
      rate_limited: 429,
      internal_error: 500,
      unavailable: 503,
      insufficient_storage: 507,
    });
  });
});

describe('toErrorBody', () => {
  it('turns a BerthError into its status and {error, code, details}', () => {
    const issues = [{ path: 'input', message: 'must be a JSON object' }];
    expect(toErrorBody(new BerthError('invalid_request', 'input: must be a JSON object', issues))).toEqual({
      status: 400,
      body: { error: 'input: must be a JSON object', code: 'invalid_request', details: issues },
    });
    const plain = toErrorBody(new BerthError('job_not_found', 'job x not found'));
    expect(plain).toEqual({ status: 404, body: { error: 'job x not found', code: 'job_not_found' } });
    expect('details' in plain.body).toBe(false);
  });

  it('keeps falsy details other than undefined', () => {
    expect(toErrorBody(new BerthError('rate_limited', 'slow down', 0)).body.details).toBe(0);
    expect(toErrorBody(new BerthError('rate_limited', 'slow down', null)).body.details).toBeNull();
  });

  it('makes BerthError a named Error', () => {
    const err = new BerthError('forbidden', 'no');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('BerthError');
    expect(err.message).toBe('no');
  });

  const secret = 'password=hunter2 at /srv/berth/node_modules/pg/lib/client.js:123';
  const leaky = Object.assign(new Error(secret), { code: 'job_not_found', status: 404, details: secret });
  it.each([
    ['an Error', new Error(secret)],
    ['a TypeError', new TypeError(secret)],
    ['an Error that looks coded', leaky],
    ['a lookalike object', { name: 'BerthError', code: 'job_not_found', message: secret, status: 404 }],
    ['a string', secret],
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
    ['a symbol', Symbol(secret)],
  ])('turns %s into a 500 that leaks nothing', (_, thrown) => {
    const out = toErrorBody(thrown);
    expect(out).toEqual({ status: 500, body: { error: 'internal error', code: 'internal_error' } });
    expect(JSON.stringify(out)).not.toMatch(/hunter2|node_modules|\.js:/);
  });
});

describe('cause', () => {
  it('BerthError and ConfigError keep the error they wrap as `cause`, and never send it', () => {
    const inner = new SyntaxError('Unexpected token');
    const err = new BerthError('invalid_json', 'request body is not valid JSON', undefined, { cause: inner });
    expect(err.cause).toBe(inner);
    expect(toErrorBody(err)).toEqual({
      status: 400,
      body: { error: 'request body is not valid JSON', code: 'invalid_json' },
    });
    expect(new BerthError('invalid_request', 'x').cause).toBeUndefined();
    expect('cause' in new BerthError('invalid_request', 'x')).toBe(false);
    expect(new ConfigError('bad config', { file: 'berth.config.json', cause: inner }).cause).toBe(inner);
    expect(new ConfigError('bad config', { cause: undefined })).toHaveProperty('cause', undefined);
  });
});
