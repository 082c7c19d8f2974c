// The Redis the scale-out and limit tests use: the one on this machine unless PLUMB_TEST_REDIS_URL says otherwise.

export const REDIS_URL = process.env.PLUMB_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
