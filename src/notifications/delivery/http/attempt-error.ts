import { WEBHOOK_BLOCKED_CODE } from '../../url-guard/url-guard';
import type { AttemptOutcome } from './attempt-result';

export interface ClassifiedError {
  outcome: Exclude<AttemptOutcome, 'success' | 'http_error'>;
  error: string;
}

/** Abort reason of the per-attempt deadline; one shared instance, compared by identity. */
export class AttemptDeadlineExceeded extends Error {
  override readonly name = 'AttemptDeadlineExceeded';
}
export const DEADLINE_EXCEEDED = new AttemptDeadlineExceeded('webhook attempt deadline exceeded');

const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

// Node/OpenSSL certificate verification codes (err.code of the TLS socket error); ERR_SSL_* / ERR_TLS_* by prefix.
const TLS_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'EPROTO',
]);

const CONNECT_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed by the receiver while sending',
  UND_ERR_SOCKET: 'connection closed by the receiver',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed temporarily',
  EAI_FAIL: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'response body did not match its Content-Length',
  UND_ERR_HEADERS_OVERFLOW: 'response headers too large',
  UND_ERR_CLOSED: 'sender is closed',
  UND_ERR_DESTROYED: 'sender is closed',
};

const MAX_CAUSE_DEPTH = 8;

/**
 * Maps whatever undici / net / tls / the URL guard threw to an outcome and a short reason. Only messages known to be
 * free of request data are quoted (guard refusals, TLS verification, undici argument errors, which name headers but
 * never their values); anything unknown is reported by its code or name only.
 */
export function classifyError(error: unknown, timeoutMs: number): ClassifiedError {
  const errors = flatten(error);
  if (errors.includes(DEADLINE_EXCEEDED)) return timedOut(timeoutMs);
  for (const candidate of errors) {
    if (codeOf(candidate) === WEBHOOK_BLOCKED_CODE) return { outcome: 'blocked', error: `blocked: ${messageOf(candidate)}` };
  }
  for (const candidate of errors) {
    const code = codeOf(candidate);
    if (code === undefined) continue;
    if (TIMEOUT_CODES.has(code)) return timedOut(timeoutMs);
    if (TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.startsWith('CERT_')) {
      return { outcome: 'tls_error', error: `TLS: ${messageOf(candidate) || code}` };
    }
    const reason = CONNECT_REASONS[code];
    if (reason !== undefined) return { outcome: 'connect_error', error: reason };
    if (code.startsWith('HPE_')) return { outcome: 'connect_error', error: `invalid HTTP response (${code})` };
    if (code === 'UND_ERR_INVALID_ARG') return { outcome: 'connect_error', error: `request not sent: ${messageOf(candidate)}` };
  }
  const first = errors[0];
  const label = codeOf(first) ?? (first instanceof Error ? first.name : typeof first);
  return { outcome: 'connect_error', error: `request failed (${label})` };
}

export function blockedBeforeConnect(error: unknown): ClassifiedError {
  // checkSyntax / assertLiteralHostAllowed only throw UnsafeWebhookUrlError, whose message never quotes the URL.
  const reason = error instanceof Error && error.message ? error.message : 'unsafe webhook URL';
  return { outcome: 'blocked', error: `blocked: ${reason}` };
}

function timedOut(timeoutMs: number): ClassifiedError {
  return { outcome: 'timeout', error: `timed out after ${timeoutMs} ms` };
}

/** The error, its `cause` chain and AggregateError members (net's happy-eyeballs connect), breadth first. */
function flatten(error: unknown): unknown[] {
  const seen: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.length < MAX_CAUSE_DEPTH) {
    const next = queue.shift();
    if (next === undefined || next === null || seen.includes(next)) continue;
    seen.push(next);
    if (typeof next !== 'object') continue;
    if ('cause' in next) queue.push(next.cause);
    if (next instanceof AggregateError) queue.push(...next.errors);
  }
  return seen;
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : '';
}
