const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-service-signature'];
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
