import { WEBHOOK_BLOCKED_CODE } from '../../url-policy/webhook-url-policy';
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
  'ETIMEOUT', // c-ares: the host name lookup got no answer within the attempt's deadline
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

// Node/OpenSSL certificate verification codes (err.code of the TLS socket error), whose messages are OpenSSL's fixed
// one-line verify texts ("certificate has expired", "self-signed certificate"...). ERR_SSL_*, ERR_TLS_*: see tlsReason.
const CERT_VERIFY_CODES: ReadonlySet<string> = new Set([
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
]);

const CONNECT_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed by the receiver while sending',
  UND_ERR_SOCKET: 'connection closed by the receiver',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed temporarily',
  EAI_FAIL: 'host name lookup failed',
  ENODATA: 'host name has no address',
  ESERVFAIL: 'host name lookup failed (DNS server failure)',
  EREFUSED: 'host name lookup refused by the DNS server',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'response body did not match its Content-Length',
  UND_ERR_HEADERS_OVERFLOW: 'response headers too large',
  UND_ERR_CLOSED: 'sender is closed',
  UND_ERR_DESTROYED: 'sender is closed',
};

const MAX_CAUSE_DEPTH = 8;

/** The stored error column is 512 characters; the variable part of a reason (names, altnames) is cut well before. */
const MAX_ERROR_CHARS = 512;
const MAX_DETAIL_CHARS = 200;

/**
 * Maps whatever undici / net / tls / the URL guard threw to an outcome and a short reason. Only messages known to be
 * free of request data are quoted (guard refusals, TLS verification, undici argument errors, which name headers but
 * never their values); anything unknown is reported by its code or name only.
 */
export function classifyError(error: unknown, timeoutMs: number): ClassifiedError {
  const classified = classify(error, timeoutMs);
  return { outcome: classified.outcome, error: truncate(classified.error, MAX_ERROR_CHARS) };
}

function classify(error: unknown, timeoutMs: number): ClassifiedError {
  const errors = flatten(error);
  if (errors.includes(DEADLINE_EXCEEDED)) return timedOut(timeoutMs);
  for (const candidate of errors) {
    if (codeOf(candidate) === WEBHOOK_BLOCKED_CODE) return { outcome: 'blocked', error: `blocked: ${messageOf(candidate)}` };
  }
  for (const candidate of errors) {
    const code = codeOf(candidate);
    if (code === undefined) continue;
    if (TIMEOUT_CODES.has(code)) return timedOut(timeoutMs);
    const tls = tlsReason(candidate, code);
    if (tls !== undefined) return { outcome: 'tls_error', error: tls };
    if (code === 'UND_ERR_SOCKET') {
      const unexpected = UNEXPECTED_RESPONSE_REASONS[messageOf(candidate)];
      if (unexpected !== undefined) return { outcome: 'connect_error', error: unexpected };
    }
    const reason = CONNECT_REASONS[code];
    if (reason !== undefined) return { outcome: 'connect_error', error: reason };
    if (code.startsWith('HPE_')) return { outcome: 'connect_error', error: `invalid HTTP response (${code})` };
    if (code === 'UND_ERR_INVALID_ARG') return { outcome: 'connect_error', error: `request not sent: ${messageOf(candidate)}` };
  }
  // undici 7 builds its HTTPParserError with no code (it looks the numeric llhttp error up by name); the parser's
  // reason, in the message's parentheses, is one of llhttp's fixed texts ("Invalid header value char"...).
  for (const candidate of errors) {
    if (candidate instanceof Error && candidate.name === 'HTTPParserError') {
      const parserReason = /\(([^()]+)\)\s*$/.exec(candidate.message)?.[1];
      const detail = parserReason !== undefined && isPlainText(parserReason) ? truncate(parserReason, MAX_DETAIL_CHARS) : 'unparseable';
      return { outcome: 'connect_error', error: `invalid HTTP response (${detail})` };
    }
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

/**
 * undici's own SocketError messages for a connection it dropped because of what the receiver sent (not because the
 * receiver closed it): an answer it did not expect (an unsolicited response, or a 1xx it cannot take) or an upgrade.
 */
const UNEXPECTED_RESPONSE_REASONS: Readonly<Record<string, string>> = {
  'bad response': 'invalid HTTP response (unexpected response)',
  'bad upgrade': 'invalid HTTP response (unrequested protocol upgrade)',
};

/**
 * A short reason for a TLS failure, or undefined if this is not one. OpenSSL's own errors (ERR_SSL_*, EPROTO) carry
 * a message such as `80CC…:error:0A00042E:SSL routines:ssl3_read_bytes:tlsv1 alert protocol version:
 * ../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 70`: only its reason is kept.
 */
function tlsReason(error: unknown, code: string): string | undefined {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') {
    const detail = stringProperty(error, 'reason');
    return detail !== undefined && isPlainText(detail)
      ? `hostname does not match certificate (${truncate(detail, MAX_DETAIL_CHARS)})`
      : 'hostname does not match certificate';
  }
  if (CERT_VERIFY_CODES.has(code) || code.startsWith('CERT_')) {
    const message = messageOf(error);
    return isPlainText(message) ? truncate(message, MAX_DETAIL_CHARS) : `certificate rejected (${code})`;
  }
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO') return `TLS handshake failed: ${opensslReason(error, code)}`;
  if (code.startsWith('ERR_TLS_')) {
    const message = messageOf(error);
    return `TLS handshake failed: ${isPlainText(message) ? truncate(message, MAX_DETAIL_CHARS) : code}`;
  }
  return undefined;
}

/** The reason field of an OpenSSL error ("wrong version number", "sslv3 alert handshake failure"), or its code. */
function opensslReason(error: unknown, code: string): string {
  const reason = stringProperty(error, 'reason') ?? /:error:[0-9A-Fa-f]+:[^:]*:[^:]*:([^:]+):/.exec(messageOf(error))?.[1];
  if (reason === undefined || !isPlainText(reason)) return code === 'EPROTO' ? 'protocol error' : code;
  const hint = OPENSSL_HINTS[reason];
  return hint === undefined ? reason : `${reason} (${hint})`;
}

const OPENSSL_HINTS: Readonly<Record<string, string>> = {
  'wrong version number': 'the port does not speak TLS, is it plain HTTP?',
  'packet length too long': 'the port does not speak TLS, is it plain HTTP?',
  'tlsv1 alert protocol version': 'the receiver accepts none of the TLS versions we offer, 1.2 and 1.3',
  'unsupported protocol': 'the receiver only offers TLS versions older than 1.2',
  // OpenSSL 3.0 (Node 20, earlier Node 22 releases) says "sslv3 alert …"; OpenSSL 3.5 (Node 22.23, 24.21) "ssl/tls alert …".
  'sslv3 alert handshake failure': 'the receiver refused the handshake, e.g. no cipher in common',
  'ssl/tls alert handshake failure': 'the receiver refused the handshake, e.g. no cipher in common',
};

/** One line of printable text with no file path: safe and useful to store as it is. */
function isPlainText(text: string): boolean {
  return text.length > 0 && /^[\x20-\x7e]+$/.test(text) && !/(^|[\s:(])(\.{1,2}\/|\/[\w.-]+\/)/.test(text);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function stringProperty(error: unknown, name: string): string | undefined {
  if (typeof error !== 'object' || error === null || !(name in error)) return undefined;
  const value = (error as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
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
