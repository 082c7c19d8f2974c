// The error catalogue: every failure a client can see, with its status and the SPEC.md section 7 body shape.

export type FieldErrors = Record<string, string[]>;

/** Base class: anything thrown with this type is answered as-is; anything else becomes a bare 500. */
export abstract class ApiError extends Error {
  abstract readonly status: number;
  abstract body(): unknown;
  headers(): Record<string, string> {
    return {};
  }
}

/** `{ error: message }` with any status: the "general error" shape. */
export class GeneralError extends ApiError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
  body(): unknown {
    return { error: this.message };
  }
}

/** 503 `{ error: message }` with Retry-After: the request may succeed if sent again after `retryAfterSeconds`. */
export class RetryLater extends ApiError {
  readonly status = 503;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
  body(): unknown {
    return { error: this.message };
  }
  override headers(): Record<string, string> {
    return { 'retry-after': String(this.retryAfterSeconds) };
  }
}

/** 400 `{ errors: { field: [messages] } }`: invalid or missing parameters. */
export class ValidationError extends ApiError {
  readonly status = 400;
  constructor(readonly fields: FieldErrors) {
    super(Object.entries(fields).map(([f, m]) => `${f} ${m.join(', ')}`).join('; '));
  }
  static of(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
  body(): unknown {
    return { errors: this.fields };
  }
}

export const badRequest = (message: string) => new GeneralError(400, message);
export const unauthenticated = (message: string) => new GeneralError(401, message);
export const notFound = (message: string) => new GeneralError(404, message);
export const gone = (message: string) => new GeneralError(410, message);
export const unprocessable = (message: string) => new GeneralError(422, message);

/** SPEC.md: a token that lacks permission for the action is a 400 with the general shape. */
export const forbidden = () => badRequest('This token does not have permission to perform this action');

/** Collects field errors while a body or query is checked, then throws them all at once. */
export class FieldErrorCollector {
  private readonly fields: FieldErrors = {};
  add(field: string, message: string): void {
    // Own properties only: a field named after an Object.prototype member (`constructor`) is just a name.
    if (Object.hasOwn(this.fields, field)) this.fields[field]!.push(message);
    else Object.defineProperty(this.fields, field, { value: [message], enumerable: true, writable: true, configurable: true });
  }
  has(field: string): boolean {
    return Object.hasOwn(this.fields, field);
  }
  throwIfAny(): void {
    if (Object.keys(this.fields).length > 0) throw new ValidationError(this.fields);
  }
}
