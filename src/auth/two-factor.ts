// Two-factor authentication: TOTP (RFC 6238, by the `otpauth` library) with replay protection, and one-time
// recovery codes stored as SHA-256 hashes.

import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { hashToken } from '../domain/secrets.js';
import type { TeamStore } from '../store/team-types.js';

const PERIOD_S = 30;
export const RECOVERY_CODE_COUNT = 10;

/** A new random TOTP secret (160 bits, as RFC 4226 recommends), base32 for authenticator apps. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secret: string, email = ''): TOTP {
  return new TOTP({ issuer: 'Plumb', label: email, algorithm: 'SHA1', digits: 6, period: PERIOD_S, secret: Secret.fromBase32(secret) });
}

/** The `otpauth://` URI authenticator apps read (typed in, or opened from the setup page). */
export function otpauthUri(secret: string, email: string): string {
  return totp(secret, email).toString();
}

/** The time step a code is valid for (one step of clock drift either way), or undefined. */
export function totpStep(secret: string, code: string, now: Date): number | undefined {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return undefined;
  const delta = totp(secret).validate({ token, timestamp: now.getTime(), window: 1 });
  if (delta === null) return undefined;
  return Math.floor(now.getTime() / 1000 / PERIOD_S) + delta;
}

const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten codes of 10 characters (about 49 bits each): `xxxxx-xxxxx`, shown once, stored hashed. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(10);
    const chars = [...bytes].map((b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** What a typed recovery code is compared as: lower case, without spaces or dashes. */
export function recoveryCodeHash(code: string): string {
  return hashToken(code.toLowerCase().replace(/[\s-]+/g, ''));
}

/**
 * Checks a second factor typed at login: a TOTP code (each time step usable once) or an unused recovery code
 * (used up by this). Which one it was, or undefined.
 */
export async function checkSecondFactor(
  team: TeamStore,
  userId: number,
  secret: string,
  code: string,
  now: Date,
): Promise<'totp' | 'recovery' | undefined> {
  const typed = code.trim().slice(0, 64);
  const step = totpStep(secret, typed, now);
  if (step !== undefined) return (await team.useTotpStep(userId, step)) ? 'totp' : undefined;
  if (typed.replace(/[\s-]+/g, '').length === 10 && (await team.useRecoveryCode(userId, recoveryCodeHash(typed)))) return 'recovery';
  return undefined;
}
