import { X509Certificate } from 'node:crypto';
import { Resolver } from 'node:dns';
import { readFileSync } from 'node:fs';
import { parseCidrList } from '../../index';

/** The variable that lets a production service reach non-public webhook addresses anyway, and its only accepted value. */
export const ALLOW_PRIVATE_IN_PRODUCTION = {
  variable: 'WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION',
  value: 'i-understand-the-ssrf-risk',
} as const;

/** The variable that lets a production service serve /metrics without a token, and its only accepted value. */
export const METRICS_OPEN_IN_PRODUCTION = {
  variable: 'METRICS_OPEN_IN_PRODUCTION',
  value: 'i-understand-metrics-are-open',
} as const;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** `WEBHOOK_ALLOWED_CIDRS` as a list of entries (commas and/or whitespace). */
export function splitCidrs(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/**
 * What is wrong with `WEBHOOK_ALLOWED_CIDRS`, as one line naming the variable, or null. In production an allow-list
 * that reaches any non-public address is refused unless `WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION` accepts the SSRF risk.
 */
export function allowedCidrsProblem(value: string | undefined, production: boolean, privateAllowed: boolean): string | null {
  let overlaps: string[];
  try {
    overlaps = parseCidrList(splitCidrs(value)).nonGlobalOverlaps();
  } catch (error) {
    return `WEBHOOK_ALLOWED_CIDRS must list IP ranges, not host names: ${(error as Error).message}`;
  }
  if (!production || privateAllowed || overlaps.length === 0) return null;
  return (
    `WEBHOOK_ALLOWED_CIDRS lets webhooks reach non-public addresses (${overlaps.join('; ')}), which is refused when ` +
    `NODE_ENV=production (SSRF): unset it, or set ${ALLOW_PRIVATE_IN_PRODUCTION.variable}=${ALLOW_PRIVATE_IN_PRODUCTION.value}`
  );
}

/** `WEBHOOK_DNS_SERVERS` as a list of servers (commas and/or whitespace). */
export function splitDnsServers(value: string | undefined): string[] {
  return splitCidrs(value);
}

/** What is wrong with `WEBHOOK_DNS_SERVERS` (each `ip`, `ip:port` or `[ipv6]:port`), as one line naming it, or null. */
export function webhookDnsServersProblem(value: string | undefined): string | null {
  const servers = splitDnsServers(value);
  try {
    if (servers.length > 0) new Resolver().setServers(servers);
    return null;
  } catch {
    return `WEBHOOK_DNS_SERVERS must list DNS server addresses (1.1.1.1, 10.0.0.2:5353, [2001:db8::1]:53), comma-separated: got "${value}"`;
  }
}

/** The extra CA file, read and checked: every PEM block in it must be a certificate. */
export interface ExtraCaFile {
  readonly path: string;
  readonly pem: string;
  readonly certificates: readonly X509Certificate[];
}

/** Reads `WEBHOOK_EXTRA_CA_FILE`; throws an Error whose message is one line naming the variable. */
export function readExtraCaFile(path: string): ExtraCaFile {
  const problem = (why: string) => new Error(`WEBHOOK_EXTRA_CA_FILE (${path}) ${why}`);
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw problem(`cannot be read: ${(error as Error).message}`);
  }
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw problem('holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  const certificates = blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch (error) {
      throw problem(`certificate ${index + 1} of ${blocks.length} cannot be parsed: ${(error as Error).message}`);
    }
  });
  return { path, pem, certificates };
}

/** Start-up log lines: which allow-list and which extra CAs are in force (no secrets: certificates and ranges are public). */
export function webhookTrustSummary(
  allowedCidrs: readonly string[] | undefined,
  extraCa: ExtraCaFile | undefined,
  env: { production: boolean; nodeExtraCaCerts?: string },
): { allowList: string; extraCas: string; warn: boolean } {
  const list = parseCidrList(allowedCidrs ?? []);
  const allowList = list.isEmpty
    ? 'Webhook allow-list: none (webhook URLs must reach public addresses only)'
    : `Webhook allow-list: ${list.toString()} (webhook URLs may reach these addresses although not public` +
      `${env.production ? `; allowed in production by ${ALLOW_PRIVATE_IN_PRODUCTION.variable}` : ''})`;
  const certificates = extraCa?.certificates.map(
    (certificate) =>
      `"${certificate.subject.replace(/\n/g, ', ')}" (SHA-256 ${certificate.fingerprint256}, valid to ${certificate.validTo})`,
  );
  const fromEnv = env.nodeExtraCaCerts ? `; NODE_EXTRA_CA_CERTS=${env.nodeExtraCaCerts} is trusted too` : '';
  const extraCas = extraCa
    ? `Extra CAs for webhook receivers: ${certificates!.length} from ${extraCa.path}: ${certificates!.join(', ')}${fromEnv}`
    : `Extra CAs for webhook receivers: none (Node's default roots${fromEnv})`;
  return { allowList, extraCas, warn: env.production && !list.isEmpty };
}
