// REDIS_URL's own parameter, read where the configuration is checked and where the client is made (without ioredis,
// which the configuration must not load).

/**
 * REDIS_URL's `cluster` parameter (`redis://host:6379?cluster=on`): true for a Redis Cluster client, false for one
 * Redis (`off`, or no parameter), undefined for any other value. In the URL rather than a variable of its own so that
 * it travels with the URL to every client Plumb makes (the ingest thread's too).
 */
export function redisClusterMode(redisUrl: string): boolean | undefined {
  const value = new URL(redisUrl).searchParams.get('cluster');
  if (value === null || value === 'off' || value === 'false') return false;
  return value === 'on' || value === 'true' ? true : undefined;
}
