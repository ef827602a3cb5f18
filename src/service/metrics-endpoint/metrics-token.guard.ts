import {
  type CanActivate,
  type ExecutionContext,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Request, Response } from 'express';
import { BearerToken, Clock, SystemClock } from '../../index';

export const METRICS_TOKEN = Symbol('METRICS_TOKEN');

/** Wrong metrics tokens one client address may send per minute before it gets 429 (as on the internal endpoint). */
export const METRICS_TOKEN_FAILURES_PER_MINUTE = 20;
const FAILURE_WINDOW_MS = 60_000;
/** Client addresses counted at once; beyond it (after sweeping) new addresses are not tracked rather than grow memory. */
const MAX_TRACKED_CLIENTS = 10_000;

/**
 * `Authorization: Bearer <METRICS_TOKEN>` when a token is configured; open otherwise (refused at start in production
 * unless the operator opts out). A client address that keeps sending wrong tokens is answered 429 with `Retry-After`,
 * counted per instance on the notifications module's clock; each refusal is logged as a 4xx request.
 */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected: BearerToken | null;
  /** Wrong tokens per client address in its current one-minute window; windows that ended are swept as it grows. */
  private readonly windows = new Map<string, { endsAt: number; failures: number }>();
  private clock: Clock | undefined;

  constructor(
    @Inject(METRICS_TOKEN) token: string | undefined,
    private readonly moduleRef: ModuleRef,
  ) {
    this.expected = token ? new BearerToken(token) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) return true;
    const request = context.switchToHttp().getRequest<Request>();
    if (this.expected.matches(request.headers.authorization)) return true;
    const response = context.switchToHttp().getResponse<Response>();
    const retryAfterSeconds = this.countFailure(request.ip ?? 'unknown');
    if (retryAfterSeconds !== null) {
      response.setHeader('Retry-After', String(retryAfterSeconds));
      throw new HttpException('Too many requests with a wrong metrics token; retry later', HttpStatus.TOO_MANY_REQUESTS);
    }
    response.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
    throw new UnauthorizedException('A valid metrics token is required');
  }

  /** Counts a wrong token from `client`; null while under the limit, else the seconds until its window ends. */
  private countFailure(client: string): number | null {
    // Resolved at the first refusal: the notifications module's clock is surely instantiated by then.
    const now = (this.clock ??= clockOf(this.moduleRef)).now();
    if (this.windows.size >= MAX_TRACKED_CLIENTS) {
      for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
    }
    let window = this.windows.get(client);
    if (window === undefined || window.endsAt <= now) {
      window = { endsAt: now + FAILURE_WINDOW_MS, failures: 0 };
      if (this.windows.size < MAX_TRACKED_CLIENTS) this.windows.set(client, window);
    }
    window.failures++;
    return window.failures > METRICS_TOKEN_FAILURES_PER_MINUTE ? Math.max(1, Math.ceil((window.endsAt - now) / 1000)) : null;
  }
}

/** The notifications module's clock (a test's TestClock moves the window), or the system's without the module. */
function clockOf(moduleRef: ModuleRef): Clock {
  try {
    return moduleRef.get(Clock, { strict: false }) ?? new SystemClock();
  } catch {
    return new SystemClock();
  }
}
