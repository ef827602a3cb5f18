import type { CorsOptions } from '@nestjs/common/internal';

/**
 * CORS for browser apps on the given origins only (exact `scheme://host[:port]` matches): the settings
 * API's methods, `Authorization` and `Content-Type` request headers, and `Retry-After` readable on a 429.
 * Host apps pass it to `app.enableCors(...)`; the standalone service does so when `CORS_ORIGINS` is set.
 */
export function corsOptionsFor(origins: readonly string[]): CorsOptions {
  return {
    origin: [...origins],
    methods: ['GET', 'PUT', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: ['Retry-After'],
    maxAge: 600,
  };
}
