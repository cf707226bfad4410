import { readFileSync } from 'node:fs';
import {
  ErrorBodySchema,
  ExecutionPolicy,
  HealthReplySchema,
  JobObject,
  JobRequest,
  JobStatus,
  PurgeReplySchema,
  RunReplySchema,
  StreamReplySchema,
} from '@berth/protocol';
import { z } from 'zod';

/** A JSON Schema object as the OpenAPI document holds it. */
export type JsonSchema = Record<string, unknown>;

/** zod -> JSON Schema (2020-12, what OpenAPI 3.1 uses), input side; `z.custom` JSON objects become `type: object`. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: (ctx) => {
      if ((ctx.zodSchema as { _zod: { def: { type: string } } })._zod.def.type === 'custom')
        ctx.jsonSchema['type'] = 'object';
    },
  }) as JsonSchema;
  return withoutDialect(out);
}

/** A schema without its `$schema` line (the document's dialect applies). */
export function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** The shared component schemas, from the protocol's zod schemas. */
export function protocolSchemas(): Record<string, JsonSchema> {
  return {
    JobStatus: jsonSchemaOf(JobStatus),
    ExecutionPolicy: jsonSchemaOf(ExecutionPolicy),
    JobRequest: jsonSchemaOf(JobRequest),
    JobObject: jsonSchemaOf(JobObject),
    RunReply: jsonSchemaOf(RunReplySchema),
    StreamReply: jsonSchemaOf(StreamReplySchema),
    PurgeReply: jsonSchemaOf(PurgeReplySchema),
    HealthReply: jsonSchemaOf(HealthReplySchema),
    Error: jsonSchemaOf(ErrorBodySchema),
  };
}

/** @berth/server's version, for `info.version`. */
export const SERVER_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0.0.0';
  }
})();
