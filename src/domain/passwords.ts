// Rules for dashboard login passwords (scrypt-hashed by secrets.ts).

export const PASSWORD_MIN_LENGTH = 10;
/** Long enough for any passphrase or generated password, short enough that hashing it costs nothing extra. */
export const PASSWORD_MAX_LENGTH = 1024;

/** Undefined when the password is acceptable, else why not. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return undefined;
}

export const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;
