import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { positiveInteger } from '../common/values/positive-integer';
import { CidrList, describeNonGlobalAddress, parseCidrList } from './address-policy';
import {
  DEFAULT_HOST_RESOLUTION,
  DnsHostResolver,
  fixedAddressesOf,
  type HostResolutionOptions,
  type HostResolver,
  isNoAnswerError,
  isNoSuchNameError,
  type LookupContext,
  withDeadline,
} from './host-resolver';
import { UnsafeWebhookUrlError, WebhookAddressBlockedError } from './unsafe-webhook-url.error';

export { type HostResolutionOptions, type HostResolver } from './host-resolver';
export { UnsafeWebhookUrlError, WEBHOOK_BLOCKED_CODE, WebhookAddressBlockedError } from './unsafe-webhook-url.error';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

// The WHATWG parser silently strips or percent-encodes these, so the stored URL would differ from what was typed.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const WHITESPACE_OR_CONTROL = /[\u0000-\u0020\u007f]/;
/**
 * A name's refused answer is not described: which range a name resolves to is the internal DNS's business (a URL typed
 * as an IP literal is, as it was typed). Shown in the 400 of a save and in the delivery log of a blocked attempt.
 */
const RESOLVES_TO_NON_PUBLIC = 'must not resolve to an address that is not public';

/** The deadline of a connect-time lookup when none is given: the attempt's (spec 6.3). */
const DEFAULT_CONNECT_LOOKUP_MS = 5000;

export interface WebhookUrlPolicyOptions {
  /** A host app's own resolver, called instead of the DNS (under the same deadlines, without cache or limits). */
  resolver?: HostResolver;
  /** Addresses inside these ranges are accepted even when not global; meant for tests reaching a loopback receiver. */
  allowedCidrs?: readonly string[] | CidrList;
  /** Servers, deadline, cache and limits of the default (c-ares) resolver. */
  hostResolution?: HostResolutionOptions;
  /** Deadline of a connect-time lookup, in ms: the attempt's own (default 5000). */
  connectLookupTimeoutMs?: number;
  /** Time source of the answer cache (default Date.now). */
  now?: () => number;
}

type Lookup = (hostname: string, context: LookupContext) => Promise<string[]>;

/**
 * Which webhook URLs may be saved and which addresses may be connected to (SSRF): https only, no credentials, and only
 * global addresses unless `allowedCidrs` says otherwise. Checked at save time, and again by the sender's `lookup`
 * right before each connection.
 */
export class WebhookUrlPolicy {
  private readonly lookup: Lookup;
  private readonly allowedCidrs: CidrList;
  private readonly saveTimeoutMs: number;
  private readonly connectTimeoutMs: number;

  constructor(options: WebhookUrlPolicyOptions = {}) {
    const { resolver, allowedCidrs = [], hostResolution = {} } = options;
    this.lookup = resolver ? injectedLookup(resolver) : dnsLookup(new DnsHostResolver(hostResolution, options.now));
    this.allowedCidrs = allowedCidrs instanceof CidrList ? allowedCidrs : parseCidrList(allowedCidrs);
    this.saveTimeoutMs = positiveInteger(
      'hostResolution.saveTimeoutMs',
      hostResolution.saveTimeoutMs ?? DEFAULT_HOST_RESOLUTION.saveTimeoutMs,
    );
    this.connectTimeoutMs = options.connectLookupTimeoutMs ?? DEFAULT_CONNECT_LOOKUP_MS;
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
   * Save-time check: checkSyntax, then every address the host name resolves to must be allowed. A name the DNS says
   * does not exist (or has no address) is accepted: it may be created later, and the connect-time lookup checks it
   * again anyway. A name the DNS does not answer for within `saveTimeoutMs` (or answers with a failure) is refused,
   * as is a save while the user already has `maxInFlightPerUser` lookups in flight: the caller hears it at once.
   */
  async assertSafeToSave(rawUrl: string, context: { userId?: number } = {}): Promise<URL> {
    const url = this.checkSyntax(rawUrl);
    if (fixedAddressesOf(url.hostname) !== null) return url;
    let answers: string[];
    try {
      answers = await this.lookup(url.hostname, { deadlineMs: this.saveTimeoutMs, userId: context.userId });
    } catch (error) {
      if (isNoSuchNameError(error)) return url;
      if ((error as NodeJS.ErrnoException).code === 'ELOOKUPBUSY') {
        throw new UnsafeWebhookUrlError('could not be checked now: too many of your host name lookups are in flight; try again shortly');
      }
      if (isNoAnswerError(error)) {
        throw new UnsafeWebhookUrlError(
          `must have a host name that resolves within ${formatSeconds(this.saveTimeoutMs)} (no DNS answer in time); try again later`,
        );
      }
      throw error;
    }
    for (const answer of answers) {
      const refusal = this.refusalFor(answer);
      if (refusal !== null) throw new UnsafeWebhookUrlError(RESOLVES_TO_NON_PUBLIC);
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
    const answers = fixed ?? (await this.lookup(hostname, { deadlineMs: this.connectTimeoutMs }));
    for (const answer of answers) {
      const refusal = this.refusalFor(answer);
      if (refusal !== null) {
        throw new WebhookAddressBlockedError(fixed ? `must not target ${refusal}` : RESOLVES_TO_NON_PUBLIC, hostname);
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

function dnsLookup(resolver: DnsHostResolver): Lookup {
  return (hostname, context) => resolver.resolve(hostname, context);
}

/** A host app's resolver, as it answers, under the caller's deadline (its calls are not cancelled, only abandoned). */
function injectedLookup(resolver: HostResolver): Lookup {
  return (hostname, { deadlineMs }) => withDeadline(resolver(hostname), deadlineMs, hostname);
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
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
