import { type CanActivate, type ExecutionContext, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { BearerToken } from '../index';

export const METRICS_TOKEN = Symbol('METRICS_TOKEN');

/** `Authorization: Bearer <METRICS_TOKEN>` when a token is configured; open otherwise. */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected: BearerToken | null;

  constructor(@Inject(METRICS_TOKEN) token: string | undefined) {
    this.expected = token ? new BearerToken(token) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) return true;
    if (this.expected.matches(context.switchToHttp().getRequest<Request>().headers.authorization)) return true;
    context.switchToHttp().getResponse<Response>().setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
    throw new UnauthorizedException('A valid metrics token is required');
  }
}
