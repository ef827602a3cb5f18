// Also headers the service never reads, where a client may put a credential by mistake.
const SECRET_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-service-signature',
  'x-api-key',
  'api-key',
  'x-auth-token',
  'x-access-token',
  'x-csrf-token',
  'x-xsrf-token',
];
const SECRET_FIELDS = ['webhookSecret', 'secret', 'signingSecret', 'jwtSecret', 'internalApiToken', 'metricsToken', 'password', 'token'];

/**
 * pino `redact` paths: credentials and signatures in request/response headers (also when logged
 * as a bare `headers` object), and secret-named fields at the top of a log record or one level down.
 */
export const REDACTED_PATHS: readonly string[] = [
  ...SECRET_HEADERS.flatMap((header) => [`req.headers["${header}"]`, `headers["${header}"]`, `*.headers["${header}"]`]),
  'res.headers["set-cookie"]',
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]),
];

/** Query parameters whose value is logged as `[Redacted]`: the API takes none, but a client may send a credential there. */
const SECRET_QUERY_PARAMETER =
  /^(token|access_token|id_token|refresh_token|api_key|apikey|key|secret|password|jwt|auth|authorization|signature|sig)$/i;

/** The URL as logged: the values of credential-like query parameters replaced with `[Redacted]`, the rest unchanged. */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const query = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const separator = pair.indexOf('=');
      const rawName = separator === -1 ? pair : pair.slice(0, separator);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        name = rawName;
      }
      return SECRET_QUERY_PARAMETER.test(name.trim()) ? `${rawName}=[Redacted]` : pair;
    });
  return `${url.slice(0, queryStart)}?${query.join('&')}`;
}

/** A parsed query object with the values of credential-like parameters replaced with `[Redacted]`. */
export function redactQuery(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(query).map(([name, value]) => [name, SECRET_QUERY_PARAMETER.test(name.trim()) ? '[Redacted]' : value]),
  );
}

/** Request headers logged as sent: standard ones that never carry a credential. Every other value is `[Redacted]`. */
const HARMLESS_HEADERS = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'connection',
  'content-length',
  'content-type',
  'forwarded',
  'host',
  'origin',
  'referer',
  'traceparent',
  'tracestate',
  'user-agent',
  'via',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'x-request-id',
]);

/** Request headers as logged: names kept, values of any header not in {@link HARMLESS_HEADERS} replaced with `[Redacted]`. */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, HARMLESS_HEADERS.has(name.toLowerCase()) ? value : '[Redacted]']),
  );
}
