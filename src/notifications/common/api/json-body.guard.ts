import { type CanActivate, type ExecutionContext, Injectable, UnsupportedMediaTypeException } from '@nestjs/common';
import type { Request } from 'express';
import { InvalidFieldsException } from './api-errors';

const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A request body must be JSON (415 otherwise) and free of keys that could pollute prototypes
 * (`__proto__`, `constructor`, `prototype`), at any depth: 400 naming the field, before anything runs.
 *
 * A state-changing request (POST, PUT, PATCH, DELETE) must say `Content-Type: application/json` even without a body
 * (`POST …/redeliver`): another site's page can send a form or a no-cors `fetch` with a host's cookies, but only with a
 * "simple" content type; `application/json` makes the browser ask CORS first. So hosts that authenticate users with
 * cookies are not open to cross-site requests.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (!hasBody(request)) {
      if (READ_ONLY_METHODS.has(request.method) || isJson(request)) return true;
      throw new UnsupportedMediaTypeException('Content-Type must be application/json, also on a request without a body');
    }
    if (!request.is('application/json')) throw new UnsupportedMediaTypeException('Content-Type must be application/json');
    const field = firstReservedKeyPath(request.body);
    if (field) throw InvalidFieldsException.of(field, 'is a reserved name and is not allowed');
    return true;
  }
}

// request.is() answers null without a body, so the header itself is read.
function isJson(request: Request): boolean {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json';
}

function hasBody(request: Request): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

/** Path (`payload.__proto__`, `events[2].payload.constructor`) of the first reserved key; iterative, so any depth is safe. */
function firstReservedKeyPath(body: unknown): string | undefined {
  const pending: Array<{ value: unknown; path: string }> = [{ value: body, path: '' }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (Array.isArray(value)) {
      value.forEach((item, index) => pending.push({ value: item, path: `${path}[${index}]` }));
    } else if (value !== null && typeof value === 'object') {
      for (const key of Object.keys(value)) {
        const keyPath = path ? `${path}.${key}` : key;
        if (RESERVED_KEYS.has(key)) return keyPath;
        pending.push({ value: (value as Record<string, unknown>)[key], path: keyPath });
      }
    }
  }
  return undefined;
}
