import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

/**
 * `HOST` (default 127.0.0.1: only this machine; set `HOST=0.0.0.0` to take requests from the network), `PORT` (default
 * 8443), and `TLS_CERT_FILE` + `TLS_KEY_FILE` (PEM) to serve HTTPS; plain HTTP without them (TLS terminated in front).
 * Requires `WEBHOOK_SECRET`, or with `WEBHOOK_SCHEME=ed25519` `WEBHOOK_PUBLIC_KEY` (and no secret at all).
 */
export function listenOptions(): { host: string; port: number; tls?: { cert: Buffer; key: Buffer } } {
  if (process.env.WEBHOOK_SCHEME === 'ed25519') {
    if (!process.env.WEBHOOK_PUBLIC_KEY) throw new Error('Set WEBHOOK_PUBLIC_KEY to the whpk_… public key the settings API shows');
  } else if (!process.env.WEBHOOK_SECRET) {
    throw new Error('Set WEBHOOK_SECRET to the whsec_… secret shown when you enabled the webhook');
  }
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT ?? 8443);
  const { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } = process.env;
  return { host, port, ...(certFile && keyFile ? { tls: { cert: readFileSync(certFile), key: readFileSync(keyFile) } } : {}) };
}

/** The line the examples print once they listen, with the address they are bound to (the CI test waits for it). */
export function listeningLine(bound: AddressInfo | string | null, tls: boolean): string {
  if (bound === null || typeof bound === 'string') return `listening on ${bound}`;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return `listening on ${tls ? 'https' : 'http'}://${host}:${bound.port}`;
}
