// Identifier and secret generation: tracking codes, UUIDs, API token secrets.

import { randomBytes, randomInt, randomUUID } from 'node:crypto';

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A site or event tracking code: 8 uppercase letters (DESIGN.md section 4). */
export function newTrackingCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += LETTERS[randomInt(LETTERS.length)];
  return code;
}

export const TRACKING_CODE_RE = /^[A-Z]{8}$/;

export function newUuid(): string {
  return randomUUID();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(text: string): boolean {
  return UUID_RE.test(text);
}

/** A new API token value: a recognisable prefix and 256 random bits. Only its hash is ever stored. */
export function newTokenSecret(): string {
  return `plumb_${randomBytes(32).toString('base64url')}`;
}
