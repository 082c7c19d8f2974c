// Request validation for route schemas: strict for JSON bodies, coercing for query strings and form bodies,
// and the translation of schema failures into SPEC.md's `{ errors: { field: [...] } }` shape.

import { Ajv, type ErrorObject, type SchemaObject } from 'ajv';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import type { FieldErrors } from '../domain/errors.js';

const common = { allErrors: true, strict: false, useDefaults: true } as const;
// A JSON body must carry the right types: `"name": 123` is an error, not the string "123".
const strictAjv = new Ajv({ ...common, coerceTypes: false });
// Query strings and path parameters are text on the wire.
const coercingAjv = new Ajv({ ...common, coerceTypes: true });
for (const ajv of [strictAjv, coercingAjv]) ajv.addFormat('uuid', true);

export const validatorCompiler: FastifySchemaCompiler<SchemaObject> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  return ajv.compile(schema) as ReturnType<FastifySchemaCompiler<SchemaObject>>;
};

/** The largest id of the integer id columns (accounts, users): INTEGER and SERIAL on PostgreSQL, INTEGER on DuckDB. */
export const MAX_INTEGER_ID = 2_147_483_647;

/**
 * The row an integer id in a path names (accounts, users): decimal digits within the id columns' range. Anything
 * else is undefined, for the route's 404: an id no row can carry (0, -1, 2^31 and beyond) names nothing, and must
 * never reach the database, which refuses a number beyond the column's type (PostgreSQL from 2^31, DuckDB from 2^63).
 */
export function storedIntegerId(text: string): number | undefined {
  const digits = /^0*(\d{1,10})$/.exec(text)?.[1];
  const id = digits === undefined ? 0 : Number(digits);
  return id >= 1 && id <= MAX_INTEGER_ID ? id : undefined;
}

/** Whether a path's id is an integer at all, of any size or sign (the rest is a 400 where an API documents one). */
export const isIntegerText = (text: string): boolean => /^[+-]?\d+$/.test(text);

const BOOLEAN_TEXT = new Map<string, boolean>([['true', true], ['false', false], ['1', true], ['0', false]]);

/**
 * Form-encoded bodies (a real PHP client sends them) carry every value as text. Where the route's schema
 * wants a boolean or integer, convert the text here, so both encodings meet the same strict schema.
 */
export function coerceFormBody(request: FastifyRequest): void {
  // No body at all (a bare POST, a GET with Content-Type and nothing after it) is an empty object to the schemas.
  if (request.body === undefined || request.body === null) request.body = {};
  const type = request.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) return;
  const body = request.body as Record<string, unknown> | null;
  const properties = (request.routeOptions.schema?.body as SchemaObject | undefined)?.properties as
    | Record<string, { type?: unknown }>
    | undefined;
  if (!body || !properties) return;
  for (const [key, spec] of Object.entries(properties)) {
    const value = Object.hasOwn(body, key) ? body[key] : undefined;
    if (typeof value !== 'string') continue;
    const flag = BOOLEAN_TEXT.get(value);
    if (spec.type === 'boolean' && flag !== undefined) body[key] = flag;
    else if (spec.type === 'integer' && /^-?\d{1,15}$/.test(value)) body[key] = Number(value);
  }
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function message(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'type': {
      const types = String(p.type).split(',');
      return `must be ${types.map(article).join(' or ')}`;
    }
    case 'minLength':
      return p.limit === 1 ? "can't be blank" : `is too short (minimum is ${String(p.limit)} characters)`;
    case 'maxLength':
      return `is too long (maximum is ${String(p.limit)} characters)`;
    case 'minimum':
      return `must be greater than or equal to ${String(p.limit)}`;
    case 'maximum':
      return `must be less than or equal to ${String(p.limit)}`;
    case 'pattern':
      return 'is invalid';
    case 'minItems':
      return `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** Groups schema errors by the top-level field they concern (`body` when the whole body is wrong). */
export function fieldErrorsFrom(errors: readonly ErrorObject[], context: string): FieldErrors {
  const fields: FieldErrors = {};
  for (const e of errors) {
    const path = e.instancePath.split('/').filter(Boolean);
    const field =
      e.keyword === 'required'
        ? [...path, String((e.params as { missingProperty: string }).missingProperty)][0]!
        : (path[0] ?? context);
    const text = message(e);
    // Own properties only, so a field named like an Object.prototype member (`__proto__`) stays a plain name.
    if (!Object.hasOwn(fields, field)) Object.defineProperty(fields, field, { value: [], enumerable: true, writable: true, configurable: true });
    const list = fields[field]!;
    if (!list.includes(text)) list.push(text);
  }
  return fields;
}
