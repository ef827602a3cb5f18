import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { CidrList, describeNonGlobalAddress, parseCidrList } from './address-policy';
import { type HostResolver, isUnresolvableError, systemResolver } from './host-resolver';
import { UnsafeWebhookUrlError, WebhookAddressBlockedError } from './unsafe-webhook-url.error';

export { type HostResolver, systemResolver } from './host-resolver';
export { UnsafeWebhookUrlError, WEBHOOK_BLOCKED_CODE, WebhookAddressBlockedError } from './unsafe-webhook-url.error';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

// The WHATWG parser silently strips or percent-encodes these, so the stored URL would differ from what was typed.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const WHITESPACE_OR_CONTROL = /[\u0000-\u0020\u007f]/;
const LOCALHOST = /(^|\.)localhost\.*$/i;
const LOOPBACK_ADDRESSES: readonly string[] = ['127.0.0.1', '::1'];

export interface WebhookUrlPolicyOptions {
  resolver?: HostResolver;
  /** Addresses inside these ranges are accepted even when not global; meant for tests reaching a loopback receiver. */
  allowedCidrs?: readonly string[] | CidrList;
}

/**
 * Which webhook URLs may be saved and which addresses may be connected to (SSRF): https only, no credentials, and only
 * global addresses unless `allowedCidrs` says otherwise. Checked at save time, and again by the sender's `lookup`
 * right before each connection.
 */
export class WebhookUrlPolicy {
  private readonly resolver: HostResolver;
  private readonly allowedCidrs: CidrList;

  constructor(options: WebhookUrlPolicyOptions = {}) {
    const { resolver = systemResolver, allowedCidrs = [] } = options;
    this.resolver = resolver;
    this.allowedCidrs = allowedCidrs instanceof CidrList ? allowedCidrs : parseCidrList(allowedCidrs);
  }

  /** Static checks only (no DNS). Returns the parsed URL or throws UnsafeWebhookUrlError. */
  checkSyntax(rawUrl: string): URL {
    if (typeof rawUrl !== 'string') throw new UnsafeWebhookUrlError('must be a valid absolute URL');
    if (rawUrl.length > MAX_WEBHOOK_URL_LENGTH) {
      throw new UnsafeWebhookUrlError(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
    }
    if (WHITESPACE_OR_CONTROL.test(rawUrl)) throw new UnsafeWebhookUrlError('must not contain whitespace or control characters');
    // WHATWG ends the host at `\` (https://a.example\@127.0.0.1/ is a.example), RFC 3986 parsers do not (127.0.0.1).
    if (rawUrl.includes('\\'))
      throw new UnsafeWebhookUrlError('must not contain a backslash (URL parsers disagree on where the host ends)');
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new UnsafeWebhookUrlError('must be a valid absolute URL');
    }
    if (url.protocol !== 'https:') throw new UnsafeWebhookUrlError('must use the https scheme');
    if (url.username !== '' || url.password !== '') {
      throw new UnsafeWebhookUrlError('must not contain credentials (user:password@)');
    }
    if (url.port === '0') throw new UnsafeWebhookUrlError('must not use port 0');
    if (url.href.length > MAX_WEBHOOK_URL_LENGTH) {
      throw new UnsafeWebhookUrlError(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters once normalized (percent-encoded)`);
    }
    for (const address of fixedAddressesOf(url.hostname) ?? []) this.assertAddressAllowed(address);
    return url;
  }

  /**
   * Save-time check: checkSyntax, then every address the host name resolves to must be allowed. A name that does not
   * resolve is accepted: it may be created later, and the connect-time lookup checks it again anyway.
   */
  async assertSafeToSave(rawUrl: string): Promise<URL> {
    const url = this.checkSyntax(rawUrl);
    if (fixedAddressesOf(url.hostname) !== null) return url;
    let answers: string[];
    try {
      answers = await this.resolver(url.hostname);
    } catch (error) {
      if (isUnresolvableError(error)) return url;
      throw error;
    }
    for (const answer of answers) {
      const refusal = this.refusalFor(answer);
      if (refusal !== null) throw new UnsafeWebhookUrlError(`must not resolve to ${refusal}`);
    }
    return url;
  }

  /** Throws UnsafeWebhookUrlError if this single address is not allowed. */
  assertAddressAllowed(address: string): void {
    const refusal = this.refusalFor(address);
    if (refusal !== null) throw new UnsafeWebhookUrlError(`must not target ${refusal}`);
  }

  /**
   * Node connects to IP-literal hosts without calling `lookup`, so the sender calls this before connecting.
   * Throws WebhookAddressBlockedError (code EWEBHOOKBLOCKED) for a refused literal or localhost; a no-op for names.
   */
  assertLiteralHostAllowed(hostname: string): void {
    for (const address of fixedAddressesOf(hostname) ?? []) {
      const refusal = this.refusalFor(address);
      if (refusal !== null) throw new WebhookAddressBlockedError(`must not target ${refusal}`, hostname);
    }
  }

  /**
   * A `lookup` for net/tls/https.Agent/undici `connect` options. Resolving again here, right before connecting, is
   * what defeats DNS rebinding: the socket only ever receives addresses that were just checked.
   */
  createLookup(): LookupFunction {
    return (hostname, options, callback) => {
      this.lookupForConnect(hostname, options).then(
        (addresses) =>
          process.nextTick(() => (options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family))),
        (error: NodeJS.ErrnoException) => process.nextTick(() => callback(error, options.all ? [] : '')),
      );
    };
  }

  private async lookupForConnect(hostname: string, options: LookupOptions): Promise<LookupAddress[]> {
    const fixed = fixedAddressesOf(hostname);
    const answers = fixed ?? (await this.resolver(hostname));
    for (const answer of answers) {
      const refusal = this.refusalFor(answer);
      if (refusal !== null) {
        throw new WebhookAddressBlockedError(`must ${fixed ? 'not target' : 'not resolve to'} ${refusal}`, hostname);
      }
    }
    const family = familyNumber(options.family);
    const addresses = answers
      .map((address) => ({ address, family: isIP(address) }))
      .filter((answer) => family === 0 || answer.family === family);
    if (addresses.length === 0) throw notFoundError(hostname);
    return addresses;
  }

  // Only Node's own spelling of an address is trusted: it is what the socket will actually connect to.
  private refusalFor(address: string): string | null {
    if (isIP(address) === 0) return 'an unrecognised address (neither IPv4 nor IPv6)';
    if (this.allowedCidrs.contains(address)) return null;
    return describeNonGlobalAddress(address);
  }
}

/** IP literals and localhost name their addresses without DNS; null for a name that must be resolved. */
function fixedAddressesOf(hostname: string): readonly string[] | null {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) return [host];
  return LOCALHOST.test(host) ? LOOPBACK_ADDRESSES : null;
}

function familyNumber(family: LookupOptions['family']): number {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

function notFoundError(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
    code: 'ENOTFOUND',
    syscall: 'getaddrinfo',
    hostname,
  });
}
