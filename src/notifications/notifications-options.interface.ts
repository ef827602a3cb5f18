import type { Request } from 'express';
import type { Registry } from 'prom-client';
import type { Clock } from './clock/clock';
import type { ClaimMode } from './delivery/engine/claim-mode';
import type { EventSchemas } from './event-schemas/event-schemas';
import type { ProcessRole } from './process-role';
import type { RateLimitOptions } from './rate-limit/rate-limit-options';
import type { HostResolutionOptions, HostResolver } from './url-policy/webhook-url-policy';

/** Resolves the authenticated user of a settings request; `undefined` answers 401. */
export type UserIdResolver = (request: Request) => number | undefined | Promise<number | undefined>;

/** A key that encrypts signing secrets at rest (AES-256-GCM). */
export interface EncryptionKey {
  /** Stored next to every ciphertext, so keys can be rotated. 1–32 characters of [A-Za-z0-9_-]. */
  readonly id: string;
  /** Exactly 32 bytes. */
  readonly key: Buffer;
}

/**
 * Options of {@link NotificationsModule}.
 *
 * @publicApi
 */
export interface NotificationsModuleOptions {
  /**
   * Secret for `Authorization: Bearer <JWT>` (HS256) on the settings endpoints; the numeric
   * `sub` claim is the user id. Give either this or `resolveUserId`.
   */
  readonly jwtSecret?: string;
  /**
   * With `jwtSecret`: accept user tokens without an `exp` claim, which never expire. Default false: a token
   * without `exp` is refused (401), as is any token with a `crit` header.
   */
  readonly allowTokensWithoutExpiry?: boolean;
  /** With `jwtSecret`: the longest lifetime (`exp` - `iat`, in seconds) a user token may claim; default 7 days. */
  readonly maxTokenLifetimeSeconds?: number;
  /**
   * With `jwtSecret`: the `iss` claim a user token must carry (others are 401), so that tokens of other kinds signed with
   * the same key (password reset, e-mail links) do not open the settings API. Required in production.
   */
  readonly jwtIssuer?: string;
  /** With `jwtSecret`: the `aud` claim a user token must carry (or one of its `aud` values). Required in production. */
  readonly jwtAudience?: string;
  /** Replaces JWT authentication with the host app's own user resolution. */
  readonly resolveUserId?: UserIdResolver;
  /** Encryption keys for signing secrets. The first one encrypts new secrets; all of them decrypt. */
  readonly encryptionKeys: readonly EncryptionKey[];
  /**
   * Resolves webhook host names instead of the DNS (tests inject their own). It is called under the same deadlines as
   * the DNS (`hostResolution.saveTimeoutMs` when saving, the attempt's when connecting), without cache or limits.
   */
  readonly resolver?: HostResolver;
  /**
   * The default resolver (c-ares, A and AAAA; not /etc/hosts): servers, the save-time deadline (2 s), the cache and the
   * caps on lookups in flight. Ignored when `resolver` is given.
   */
  readonly hostResolution?: HostResolutionOptions;
  /**
   * CIDR ranges that webhook URLs may reach although they are not public (e.g. `127.0.0.0/8` for a
   * test receiver on loopback). Empty by default; never set it in production.
   */
  readonly allowedCidrs?: readonly string[];
  /**
   * Only `'i-understand-the-ssrf-risk'`: lets the module start in production with `allowedCidrs` that reach non-public
   * addresses (webhook URLs can then reach those internal addresses). Without it such a list refuses to start.
   */
  readonly allowPrivateAddressesInProduction?: 'i-understand-the-ssrf-risk';
  /**
   * Whether this is production, where the options are checked more strictly (`allowedCidrs`, `jwtIssuer`,
   * `jwtAudience`). Default: `process.env.NODE_ENV === 'production'`. Every start refuses a `jwtSecret` or
   * `internalApiToken` under 32 characters and `allowedCidrs` entries that are not IP ranges.
   */
  readonly production?: boolean;
  /** PEM of extra CA certificates trusted for webhook receivers, added to Node's defaults (tests: a self-signed receiver). */
  readonly extraCaPem?: string;
  /** Public site of the service, in the `User-Agent: Service/<version> (+<site>)` of every delivery. */
  readonly serviceSite?: string;
  /**
   * Bearer token of `POST /api/v1/internal/notifications/events`, for other services. The endpoint
   * answers 404 while it is unset.
   */
  readonly internalApiToken?: string;
  /** Time source (default: the system clock). Tests inject a fake one to walk the retry schedule. */
  readonly clock?: Clock;
  /** Tuning of the delivery workers. */
  readonly delivery?: DeliveryTuning;
  /**
   * Per-user request limits on the module's settings endpoints (429 with `Retry-After` beyond them);
   * `false` turns them off. Defaults: 120/min for the whole settings API, 5/min for the test send,
   * 10/min for redeliver. Counted in this instance's memory unless `storage` is given.
   */
  readonly rateLimits?: RateLimitOptions | false;
  /**
   * prom-client registry the `webhook_*` metrics register on; pass your app's (e.g. prom-client's global
   * `register`) to serve them from your own /metrics. Default: a registry of this module's own,
   * reachable as `NotificationsMetrics.registry`.
   */
  readonly metricsRegistry?: Registry;
  /**
   * Disables WEBHOOK for a user's event type, with a reason the settings show, once this many of its
   * deliveries in a row ended FAILED (a DELIVERED one resets the count). 0 or unset: never (default).
   */
  readonly autoDisableAfterFailures?: number;
  /**
   * Failed attempts in a row after which a webhook's health is `FAILING` (settings API `GET …/webhook-health`) and
   * `DeliveryEvents.webhookHealthChanged` reports `became_failing` (default 3; a whole number ≥ 1). Attempts skipped for
   * an open circuit do not count.
   */
  readonly healthFailingAfterAttempts?: number;
  /** How long finished deliveries are kept; a daily job deletes older ones. */
  readonly retention?: RetentionOptions;
  /**
   * How long `POST /api/v1/internal/notifications/events` waits for its events to be queued (committed)
   * before it answers 503 with `Retry-After` (default 5000 ms), so a database that hangs fails publishers
   * fast instead of holding them. A 503 acknowledges nothing; a commit that still completes after it is
   * delivered anyway (at least once). Calls to `WebhookPublisher` from the host's own code have no deadline.
   */
  readonly publishTimeoutMs?: number;
  /**
   * One log line per delivery attempt (warn when it failed, debug when delivered), cancellation and busy scheduler
   * run, through Nest's `Logger` (context `WebhookDelivery`, so your app's logger). Ids, outcome and timing only,
   * never URLs, headers, bodies or secrets. Default true; `false` turns them off.
   */
  readonly deliveryLogs?: boolean;
  /**
   * What this process does (default `all`): `api` serves the settings API and publishes, never attempts a delivery;
   * `worker` delivers and retries (it looks for due deliveries every second) and answers 404 on the settings and internal routes.
   */
  readonly role?: ProcessRole;
  /**
   * The event catalog: per event type, the JSON Schema (2020-12) its `payload` must match, with a version
   * (`{ LOAN_EXECUTED: { version: 1, schema: { type: 'object', … } } }`); a type left out keeps a free object. Compiled
   * at start (an unusable schema refuses the start, naming the type); a publish whose payload breaks its schema throws
   * a 400 naming `events[i].payload.<field>` and stores nothing. Each version is recorded when first started with; a
   * later start that removes, retypes or makes optional a field of a recorded version is refused until the version is
   * raised. With a catalog, the OpenAPI `webhooks` (`webhookDocumentation`) carry one entry per event type.
   */
  readonly eventSchemas?: EventSchemas;
}

/** Ages are counted from a delivery's last update (its final attempt or cancellation). */
export interface RetentionOptions {
  /** DELIVERED and CANCELLED deliveries, with their attempts, are deleted after this many days (default 30). */
  readonly deliveredDays?: number;
  /** FAILED deliveries, with their attempts, are deleted after this many days (default 90). */
  readonly failedDays?: number;
  /**
   * How long a publish's idempotency key answers its retries, in hours (default 24): within it, the same key and events
   * answer the first call's result; after it, the key is forgotten (the daily job deletes it) and may be used again.
   */
  readonly idempotencyKeyHours?: number;
  /** Rows deleted per statement (default 1000). */
  readonly batchSize?: number;
}

/** Delivery tuning; the defaults suit one instance sending to many receivers. */
export interface DeliveryTuning {
  /** Attempts in flight at once in this instance (default 64). */
  readonly concurrency?: number;
  /**
   * Attempts in flight at once to one endpoint, in this instance (default 4). An endpoint is one user's URLs on one
   * host; a slow or dead endpoint never holds more than this many of the `concurrency` slots.
   */
  readonly perEndpointConcurrency?: number;
  /** When to stop sending to an endpoint that does not answer, and for how long. */
  readonly circuitBreaker?: {
    /** Attempts in a row that time out or fail to connect before the endpoint's circuit opens and its attempts are skipped (default 5; 0 = never). */
    readonly failuresToOpen?: number;
    /** How long its attempts are skipped before one probe attempt (default 30 s); doubled after each failed probe, up to 16×. */
    readonly coolDownMs?: number;
  };
  /** Deliveries claimed per scheduler batch (default 200). */
  readonly batchSize?: number;
  /** How long a claim holds a delivery before another instance may take it (default 60 s). */
  readonly leaseMs?: number;
  /** Deadline of one attempt: connect, TLS, headers and body (default 5 s, spec 6.3). */
  readonly timeoutMs?: number;
  /** On shutdown, how long started attempts may take to finish before the instance stops anyway (default 10 s). */
  readonly shutdownGraceMs?: number;
  /**
   * MySQL/MariaDB: how the claim keeps instances off one delivery. `skip-locked` (default on MySQL and MariaDB) or
   * `conditional-update` (chosen by default on TiDB and Vitess, whose SKIP LOCKED is unsafe or refused; `skip-locked`
   * there refuses to start).
   */
  readonly claimMode?: ClaimMode;
  /**
   * MySQL/MariaDB with several delivering instances: the URL at which the other instances reach this one's wake route
   * (`POST …/api/v1/internal/notifications/wake`, authenticated with `internalApiToken`), e.g.
   * `http://10.0.0.5:3000/api/v1/internal/notifications/wake`. An instance that publishes deliveries of users whose
   * partition this one owns calls it, so they start at once instead of at this instance's next look for due work (every
   * second). Unset: the others leave them to that look.
   */
  readonly wakeUrl?: string;
}
