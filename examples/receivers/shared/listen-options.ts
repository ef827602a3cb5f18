import { readFileSync } from 'node:fs';

/**
 * `PORT` (default 8443), and `TLS_CERT_FILE` + `TLS_KEY_FILE` (PEM) to serve HTTPS; plain HTTP without them (TLS terminated
 * in front). Requires `WEBHOOK_SECRET`.
 */
export function listenOptions(): { port: number; tls?: { cert: Buffer; key: Buffer } } {
  if (!process.env.WEBHOOK_SECRET) throw new Error('Set WEBHOOK_SECRET to the whsec_… secret shown when you enabled the webhook');
  const port = Number(process.env.PORT ?? 8443);
  const { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } = process.env;
  return { port, ...(certFile && keyFile ? { tls: { cert: readFileSync(certFile), key: readFileSync(keyFile) } } : {}) };
}

/** The line the examples print once they listen (the CI test waits for it). */
export const listeningLine = (port: number, tls: boolean) => `listening on ${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
