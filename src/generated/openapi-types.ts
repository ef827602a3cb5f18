/**
 * TypeScript types of the HTTP API, generated from openapi.json by `npm run openapi` (openapi-typescript).
 * Do not edit: a test fails while this file is stale. Import them from '@funding/notification-webhooks/openapi-types'.
 */

export interface paths {
    "/api/v1/internal/notifications/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish one event, or up to 1000 as {events: [...]}
         * @description For other services; `Authorization: Bearer <INTERNAL_API_TOKEN>`. 404 when no token is configured. 202 means every event is durably queued. 503 with `Retry-After` means nothing was acknowledged (the database is down, or did not commit within the publish deadline, 5 s by default): send the same request again later. A write that still commits after a 503 is delivered too: send an `Idempotency-Key` and retry with the same key and body, and the retry answers the first call's event ids (`replayed: true`) instead of publishing the events again. Without a key, a retry after a 503 or a lost answer may deliver an event twice, under two event ids.
         */
        post: operations["publishEvents"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The user's explicit preferences
         * @description Only what the user has saved, one row per event type and channel; WEBHOOK rows carry `webhookUrl`, `hasWebhookSecret` (never the secret) and, while the service has turned the webhook off, `disabledReasonCode` and `disabledReason`.
         */
        get: operations["listPreferences"];
        /**
         * Create or update one preference (event type × channel)
         * @description The first enable of WEBHOOK for an event type generates its signing secret and returns it once in `webhookSecret`. Later upserts keep the secret and never return it. `enabled: false` keeps the URL and the secret and stops deliveries.
         */
        put: operations["upsertPreference"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/effective": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Defaults merged with the explicit preferences, one row per event type and allowed channel
         * @description What a settings screen renders: every event type with its group, and one row per channel the type offers, `source: USER` where the user saved a preference, else the default (`IN_APP`, `EMAIL` for the digests). Types that refuse WEBHOOK (see the WebhookEventType schema) have no WEBHOOK row: hide that toggle.
         */
        get: operations["listEffectivePreferences"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/webhook-deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The user's webhook deliveries, newest first
         * @description One page of the delivery log (20 by default, at most 100), optionally of one type or status. Pass `nextCursor` back as `cursor` for the next, older page until it is null. Test sends are not in the log. A page examines at most 1,000 deliveries: filtered by both type and status it may hold fewer than `limit`, even none, while `nextCursor` is not null; keep paging until it is null.
         */
        get: operations["listDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/webhook-deliveries/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One delivery with every attempt
         * @description The delivery and its attempts in order: outcome, HTTP status, duration, error and the first 1 KiB of the answer.
         */
        get: operations["getDelivery"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/webhook-deliveries/{id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Queue the same event again (same event id, new cycle of up to 6 attempts)
         * @description Sends the stored event again to the current URL of its type, signed with the current secret, with the same `X-Service-Event-Id` (receivers deduplicate on it), as a new cycle of up to 6 attempts on the retry schedule. Answers the new delivery, PENDING. One cycle per event at a time: while a delivery of the event is PENDING (this one, or an earlier redelivery or recovery of it) the call answers 409 naming it, also when two calls arrive at once.
         */
        post: operations["redeliver"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/webhook-deliveries/recover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Queue a new cycle for every delivery that ended FAILED in a time window (same event ids and bytes)
         * @description For after you fixed your endpoint. Deliveries already recovered (their event has a newer delivery) are skipped, so calling again queues nothing twice. They are sent in the background behind live traffic, 100 per second per user and service instance (all your recover calls together; the recoveries of other users do not delay yours); at most 10,000 per call (`more` says when to call again).
         */
        post: operations["recoverDeliveries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/webhook-health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * How each of the user's webhooks is doing
         * @description One item per saved WEBHOOK preference (type and URL): healthy, failing (since when, how many attempts in a row, the last status or error), circuit open (until when, how many deliveries wait), disabled by the service (why, when) or turned off. Kept from the recorded attempts a moment after each is recorded, all service instances together.
         */
        get: operations["listWebhookHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/webhook/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace the signing secret of one event type's webhook
         * @description Generates a new signing secret for the type's configured webhook (enabled or not) and returns it once in `webhookSecret`. The next attempt, pending retries included, is signed with the new one. With `overlapHours`, the old secret also signs the Standard Webhooks `webhook-signature` for that long (two signatures), so a receiver verifying it switches without rejecting anything; `X-Service-Signature` carries the new secret only, so a receiver of that scheme accepts either secret while it switches. A delivery rejected meanwhile is retried.
         */
        post: operations["rotateSigningSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/webhook/rotate-signing-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace the Ed25519 key pair of one event type's webhook
         * @description Generates a new key pair for the type's configured webhook (enabled or not; its first, if it had none) and answers the preference with the new `signingPublicKey`. The private key is never returned. The next attempt, pending retries included, is signed with the new key when the webhook has `ed25519` among its `signatureSchemes`. With `overlapHours`, the old key also signs (`webhook-signature` carries a `v1a` of each) for that long, and the row shows `previousSigningPublicKey` until then.
         */
        post: operations["rotateSigningKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/settings/notifications/webhook/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send one signed test event to the type's configured URL now (not stored, not retried)
         * @description Signs and sends one test event (`payload: {"test": true}`, an event id starting with `test_`) to the URL saved for the type, enabled or not, and answers how the receiver answered. The answer is the only record: test sends are not stored, so they appear neither in the delivery log nor in auto-disable, and are never retried. Operators count them in the metric webhook_test_sends_total{outcome}, apart from the attempts of real deliveries.
         */
        post: operations["sendTestEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    fundingEvent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A funding-automation event, POSTed to the URL the user configured for its type
         * @description Verify `X-Service-Signature` (or `webhook-signature`, with a Standard Webhooks library) over the raw request body before parsing it: `v1=` + lowercase hex HMAC-SHA256 of `"<X-Service-Timestamp>.<raw body>"`, keyed with the `whsec_…` secret shown when WEBHOOK was first enabled for the type; reject timestamps older than a few minutes. Answer any 2xx within 5 s. Anything else (3xx included; redirects are not followed), a timeout or a connection error is retried after 1 min, 5 min, 15 min, 1 h and 4 h: at most 6 attempts. The same event keeps its `X-Service-Event-Id` across retries and redeliveries: use it to ignore duplicates.
         */
        post: operations["receiveFundingEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        AttemptDto: {
            attemptNumber: number;
            durationMs: number;
            error: string | null;
            /** @enum {string} */
            outcome: "success" | "http_error" | "timeout" | "connect_error" | "blocked" | "tls_error" | "circuit_open";
            /** @description First bytes (≤ 1 KiB) of the response body. */
            responseExcerpt: string | null;
            /** Format: date-time */
            startedAt: string;
            /** @description HTTP status of the answer; null when none came. */
            statusCode: number | null;
        };
        DeliveryDetailDto: {
            /** @description Attempts made so far (at most 6). */
            attemptCount: number;
            attempts: components["schemas"]["AttemptDto"][];
            /** Format: date-time */
            createdAt: string;
            /** @description Stable event id, sent as X-Service-Event-Id; the same across retries and redeliveries. */
            eventId: string;
            id: number;
            lastError: string | null;
            /** @description HTTP status of the last answer; null when none came. */
            lastStatusCode: number | null;
            /** Format: date-time */
            nextAttemptAt: string | null;
            /** @description Its number among your deliveries to the webhook URL it was published to, sent as `X-Service-Sequence`: 1, 2, 3… in publish order. A redelivery or recovery keeps the number of its event. Null for deliveries queued before numbering. */
            sequence: number | null;
            status: components["schemas"]["DeliveryStatus"];
            type: components["schemas"]["EventType"];
            /** Format: date-time */
            updatedAt: string;
            /**
             * @description Why a PENDING delivery waits beyond its schedule (a recovered delivery queued behind live traffic, due at `nextAttemptAt`). Null otherwise. An attempt due while its endpoint's circuit is open is not postponed: it is recorded as a skipped attempt (outcome `circuit_open`).
             * @example endpoint unreachable (5 attempts in a row timed out or failed to connect); circuit open, next try at 2026-11-24T10:15:30.000Z
             */
            waitingReason: string | null;
        };
        DeliveryDto: {
            /** @description Attempts made so far (at most 6). */
            attemptCount: number;
            /** Format: date-time */
            createdAt: string;
            /** @description Stable event id, sent as X-Service-Event-Id; the same across retries and redeliveries. */
            eventId: string;
            id: number;
            lastError: string | null;
            /** @description HTTP status of the last answer; null when none came. */
            lastStatusCode: number | null;
            /** Format: date-time */
            nextAttemptAt: string | null;
            /** @description Its number among your deliveries to the webhook URL it was published to, sent as `X-Service-Sequence`: 1, 2, 3… in publish order. A redelivery or recovery keeps the number of its event. Null for deliveries queued before numbering. */
            sequence: number | null;
            status: components["schemas"]["DeliveryStatus"];
            type: components["schemas"]["EventType"];
            /** Format: date-time */
            updatedAt: string;
            /**
             * @description Why a PENDING delivery waits beyond its schedule (a recovered delivery queued behind live traffic, due at `nextAttemptAt`). Null otherwise. An attempt due while its endpoint's circuit is open is not postponed: it is recorded as a skipped attempt (outcome `circuit_open`).
             * @example endpoint unreachable (5 attempts in a row timed out or failed to connect); circuit open, next try at 2026-11-24T10:15:30.000Z
             */
            waitingReason: string | null;
        };
        DeliveryPageDto: {
            data: components["schemas"]["DeliveryDto"][];
            /** @description Pass unchanged as `cursor` for the next (older) page; null on the last page. Opaque: do not parse it. */
            nextCursor: string | null;
        };
        /** @enum {string} */
        DeliveryStatus: "PENDING" | "DELIVERED" | "FAILED" | "CANCELLED";
        EffectivePreferenceDto: {
            channel: components["schemas"]["NotificationChannel"];
            /**
             * @description Present with `disabledReasonCode`: the same in English, with the figures (failures, when).
             * @example disabled after 5 consecutive failed deliveries on 2026-11-22T12:00:00.000Z
             */
            disabledReason?: string;
            /** @description WEBHOOK rows only, present while the service itself disabled the webhook: why, as a stable code to translate. Enabling it again clears it. */
            disabledReasonCode?: components["schemas"]["WebhookDisabledReasonCode"];
            enabled: boolean;
            group: components["schemas"]["EventGroup"];
            /** @description WEBHOOK rows only. */
            hasWebhookSecret?: boolean;
            /** @description WEBHOOK rows only: ordered delivery for this row's URL. The user's webhooks that post to one URL share it (and its `X-Service-Sequence` count): turning it on or off for one type does it for all of them. On, a delivery to the URL starts only once the one before it (lower `sequence`) is DELIVERED, FAILED or CANCELLED; one that retries holds up the rest for as long as its retries run (up to 5 h 21 min), and a FAILED one lets the next go (the gap shows in `X-Service-Sequence`). See the webhook's health (`orderedDelivery`, `waitingBehind`). */
            orderedDelivery?: boolean;
            /** @description Present during a key rotation's overlap only: the public key before it, whose private key still signs `v1a` next to the new one until `previousSigningPublicKeyValidUntil`. */
            previousSigningPublicKey?: string;
            /**
             * Format: date-time
             * @description Present with `previousSigningPublicKey`: until when the previous key pair also signs.
             */
            previousSigningPublicKeyValidUntil?: string;
            /**
             * @description WEBHOOK rows only: which schemes sign its deliveries. `hmac` (the default): `X-Service-Signature` and the Standard Webhooks `v1,` signature, with the signing secret. `ed25519`: the Standard Webhooks `v1a,` signature, with the webhook's private key, verified with `signingPublicKey`. Both: every signature is sent.
             * @example [
             *       "hmac",
             *       "ed25519"
             *     ]
             */
            signatureSchemes?: components["schemas"]["SignatureScheme"][];
            /**
             * @description WEBHOOK rows with a key pair (made when `ed25519` is first chosen): the Ed25519 public key in the Standard Webhooks format, `whpk_` and the raw 32-byte key in base64. Receivers verify `v1a` signatures with it alone; it is not a secret. The private key is never returned.
             * @example whpk_FLCTO+FlSFv2PDkGs2Ma3XnowfB7Mx4Sb4X3elqWa1c=
             */
            signingPublicKey?: string;
            /** @description USER when an explicit preference exists. */
            source: components["schemas"]["PreferenceSource"];
            type: components["schemas"]["EventType"];
            /**
             * Format: uri
             * @description WEBHOOK rows only.
             */
            webhookUrl?: string | null;
        };
        ErrorResponseDto: {
            /** @example Bad Request */
            error: string;
            /** @description Present on 400s caused by input fields. */
            errors?: components["schemas"]["FieldErrorDto"][];
            /**
             * @description Human-readable summary.
             * @example webhookUrl must use the https scheme
             */
            message: string;
            /**
             * @description The HTTP status of the answer.
             * @example 400
             */
            statusCode: number;
        };
        /** @enum {string} */
        EventGroup: "RATES" | "LOANS" | "OFFERS" | "STRATEGY" | "API_KEY" | "PLATFORM" | "UTILIZATION_AND_CASH" | "DIGESTS" | "SERVICE_MANAGED";
        /**
         * @description Every event type. EARNINGS_MILESTONE, HIGH_UTILIZATION, OFFER_FILLED, WITHDRAWAL_DETECTED are managed by the service and refuse WEBHOOK: see WebhookEventType.
         * @enum {string}
         */
        EventType: "RATE_SPIKE" | "RATE_DROP" | "RATE_FLOOR_BLOCKED" | "LOAN_EXECUTED" | "LOAN_EXPIRING" | "LOAN_EARLY_REPAID" | "LARGE_EARLY_REPAYMENT" | "LARGE_LOAN_FILLED" | "STALE_OFFER" | "KILL_SWITCH_ACTIVATED" | "STRATEGY_PAUSED" | "STRATEGY_ERROR" | "STRATEGY_TICK_STALE" | "API_KEY_INVALID" | "API_KEY_PERMISSIONS_CHANGED" | "PLATFORM_OUTAGE" | "PLATFORM_RECOVERED" | "SYSTEM_ALERT" | "LOW_UTILIZATION" | "IDLE_CASH" | "FEE_TIER_CHANGED" | "DAILY_DIGEST" | "WEEKLY_DIGEST" | "MONTHLY_DIGEST" | "YEARLY_DIGEST" | "HIGH_UTILIZATION" | "OFFER_FILLED" | "EARNINGS_MILESTONE" | "WITHDRAWAL_DETECTED";
        FieldErrorDto: {
            /** @example webhookUrl */
            field: string;
            /** @example must use the https scheme */
            message: string;
        };
        /** @enum {string} */
        NotificationChannel: "IN_APP" | "EMAIL" | "WEBHOOK";
        OrderedHeadDto: {
            /** @description Attempts made so far (of 6). */
            attemptCount: number;
            /** @description The delivery the others to this URL wait for (the delivery log has it). */
            deliveryId: number;
            /** @description Why its last attempt failed; null before its first. */
            lastError: string | null;
            /**
             * Format: date-time
             * @description When its next attempt is due; the ones behind it wait at least until then.
             */
            nextAttemptAt: string | null;
            /** @description Its `X-Service-Sequence`. */
            sequence: number | null;
            type: components["schemas"]["EventType"];
        };
        PreferenceDto: {
            channel: components["schemas"]["NotificationChannel"];
            /**
             * @description Present with `disabledReasonCode`: the same in English, with the figures (failures, when).
             * @example disabled after 5 consecutive failed deliveries on 2026-11-22T12:00:00.000Z
             */
            disabledReason?: string;
            /** @description WEBHOOK rows only, present while the service itself disabled the webhook: why, as a stable code to translate. Enabling it again clears it. */
            disabledReasonCode?: components["schemas"]["WebhookDisabledReasonCode"];
            enabled: boolean;
            /** @description WEBHOOK rows only: true when a signing secret exists. The secret itself is never listed. */
            hasWebhookSecret?: boolean;
            /** @description WEBHOOK rows only: ordered delivery for this row's URL. The user's webhooks that post to one URL share it (and its `X-Service-Sequence` count): turning it on or off for one type does it for all of them. On, a delivery to the URL starts only once the one before it (lower `sequence`) is DELIVERED, FAILED or CANCELLED; one that retries holds up the rest for as long as its retries run (up to 5 h 21 min), and a FAILED one lets the next go (the gap shows in `X-Service-Sequence`). See the webhook's health (`orderedDelivery`, `waitingBehind`). */
            orderedDelivery?: boolean;
            /** @description Present during a key rotation's overlap only: the public key before it, whose private key still signs `v1a` next to the new one until `previousSigningPublicKeyValidUntil`. */
            previousSigningPublicKey?: string;
            /**
             * Format: date-time
             * @description Present with `previousSigningPublicKey`: until when the previous key pair also signs.
             */
            previousSigningPublicKeyValidUntil?: string;
            /**
             * @description WEBHOOK rows only: which schemes sign its deliveries. `hmac` (the default): `X-Service-Signature` and the Standard Webhooks `v1,` signature, with the signing secret. `ed25519`: the Standard Webhooks `v1a,` signature, with the webhook's private key, verified with `signingPublicKey`. Both: every signature is sent.
             * @example [
             *       "hmac",
             *       "ed25519"
             *     ]
             */
            signatureSchemes?: components["schemas"]["SignatureScheme"][];
            /**
             * @description WEBHOOK rows with a key pair (made when `ed25519` is first chosen): the Ed25519 public key in the Standard Webhooks format, `whpk_` and the raw 32-byte key in base64. Receivers verify `v1a` signatures with it alone; it is not a secret. The private key is never returned.
             * @example whpk_FLCTO+FlSFv2PDkGs2Ma3XnowfB7Mx4Sb4X3elqWa1c=
             */
            signingPublicKey?: string;
            type: components["schemas"]["EventType"];
            /** Format: date-time */
            updatedAt: string;
            /**
             * Format: uri
             * @description WEBHOOK rows only.
             */
            webhookUrl?: string | null;
        };
        /**
         * @description USER when an explicit preference exists.
         * @enum {string}
         */
        PreferenceSource: "DEFAULT" | "USER";
        PublishEventDto: {
            /**
             * @description At most 10000 characters and 40000 bytes as a JSON string, quotes included: a control character takes 6 bytes there (`\u0001`), a quote, a backslash, tab, CR or LF 2, any other character 1 to 4 (UTF-8).
             * @example The FRR moved from 0.02% to 0.08% in 5 minutes.
             */
            body: string;
            /**
             * Format: date-time
             * @description When the event happened, as an RFC 3339 date-time with an offset (`Z` or `±hh:mm`); defaults to the publish time. Delivered as the same instant in UTC, to the millisecond.
             * @example 2026-11-22T12:00:00Z
             */
            createdAt?: string;
            /** @description Type-specific fields; {} when omitted. Delivered exactly as published. At most 16384 bytes as JSON, at most 32 levels of objects and arrays (the payload itself is level 1), finite numbers only. */
            payload?: {
                [key: string]: unknown;
            };
            severity: components["schemas"]["Severity"];
            /** @example USD rate spiked to 0.08% daily */
            title: string;
            type: components["schemas"]["EventType"];
            /**
             * @description Numeric id of the recipient.
             * @example 42
             */
            userId: number;
        };
        PublishEventsDto: {
            events: components["schemas"]["PublishEventDto"][];
        };
        PublishResultDto: {
            /** @description One id per event, in order; the id is sent as X-Service-Event-Id. */
            eventIds: string[];
            /** @description Webhook deliveries queued (events whose user has WEBHOOK enabled for the type). */
            queuedDeliveries: number;
            /**
             * @description Present (true) only when the answer is the stored result of an earlier call with the same `Idempotency-Key` and the same events: nothing new was stored or sent.
             * @enum {boolean}
             */
            replayed?: true;
        };
        RecoverDeliveriesDto: {
            /**
             * Format: date-time
             * @description Deliveries that ended FAILED from this instant on (RFC 3339 with offset), at most 90 days before `until`.
             * @example 2026-11-24T08:00:00Z
             */
            since: string;
            /** @description Only deliveries of this type (default: all). */
            type?: components["schemas"]["EventType"];
            /**
             * Format: date-time
             * @description Up to this instant (default: now); not before `since`.
             */
            until?: string;
        };
        RecoverResultDto: {
            /** @description True when the call stopped at its limit (10,000): call again to queue the rest. */
            more: boolean;
            /** @description Deliveries queued for a new cycle (same event ids and bytes). */
            queued: number;
        };
        RotatedSecretResponseDto: {
            channel: components["schemas"]["NotificationChannel"];
            /**
             * @description Present with `disabledReasonCode`: the same in English, with the figures (failures, when).
             * @example disabled after 5 consecutive failed deliveries on 2026-11-22T12:00:00.000Z
             */
            disabledReason?: string;
            /** @description WEBHOOK rows only, present while the service itself disabled the webhook: why, as a stable code to translate. Enabling it again clears it. */
            disabledReasonCode?: components["schemas"]["WebhookDisabledReasonCode"];
            enabled: boolean;
            /** @description WEBHOOK rows only: true when a signing secret exists. The secret itself is never listed. */
            hasWebhookSecret?: boolean;
            /** @description WEBHOOK rows only: ordered delivery for this row's URL. The user's webhooks that post to one URL share it (and its `X-Service-Sequence` count): turning it on or off for one type does it for all of them. On, a delivery to the URL starts only once the one before it (lower `sequence`) is DELIVERED, FAILED or CANCELLED; one that retries holds up the rest for as long as its retries run (up to 5 h 21 min), and a FAILED one lets the next go (the gap shows in `X-Service-Sequence`). See the webhook's health (`orderedDelivery`, `waitingBehind`). */
            orderedDelivery?: boolean;
            /**
             * Format: date-time
             * @description Until when the previous secret also signs `webhook-signature` (the overlap asked for); null when it stopped at once.
             * @example 2026-11-26T09:30:00.000Z
             */
            previousSecretValidUntil: string | null;
            /** @description Present during a key rotation's overlap only: the public key before it, whose private key still signs `v1a` next to the new one until `previousSigningPublicKeyValidUntil`. */
            previousSigningPublicKey?: string;
            /**
             * Format: date-time
             * @description Present with `previousSigningPublicKey`: until when the previous key pair also signs.
             */
            previousSigningPublicKeyValidUntil?: string;
            /**
             * @description WEBHOOK rows only: which schemes sign its deliveries. `hmac` (the default): `X-Service-Signature` and the Standard Webhooks `v1,` signature, with the signing secret. `ed25519`: the Standard Webhooks `v1a,` signature, with the webhook's private key, verified with `signingPublicKey`. Both: every signature is sent.
             * @example [
             *       "hmac",
             *       "ed25519"
             *     ]
             */
            signatureSchemes?: components["schemas"]["SignatureScheme"][];
            /**
             * @description WEBHOOK rows with a key pair (made when `ed25519` is first chosen): the Ed25519 public key in the Standard Webhooks format, `whpk_` and the raw 32-byte key in base64. Receivers verify `v1a` signatures with it alone; it is not a secret. The private key is never returned.
             * @example whpk_FLCTO+FlSFv2PDkGs2Ma3XnowfB7Mx4Sb4X3elqWa1c=
             */
            signingPublicKey?: string;
            type: components["schemas"]["EventType"];
            /** Format: date-time */
            updatedAt: string;
            /**
             * @description The new signing secret, returned exactly once. The next attempt, pending retries included, is signed with this one (and, during an overlap, `webhook-signature` with the previous one too). The `X-Service-Signature` HMAC key is this whole string, UTF-8 encoded; the `webhook-signature` key the bytes its base64 after `whsec_` encodes.
             * @example whsec_Zq3b8Xr0yJk2N5pV7tWc1aE4hL6mQ9sD0fG2iK4oU8w=
             */
            webhookSecret: string;
            /**
             * Format: uri
             * @description WEBHOOK rows only.
             */
            webhookUrl?: string | null;
        };
        RotateSecretDto: {
            /**
             * @description Hours during which the secret being replaced still signs the Standard Webhooks `webhook-signature` next to the new one (two space-separated signatures), so a receiver verifying that header switches secrets without rejecting a delivery. `X-Service-Signature` always carries the new secret only. 0 (the default): the old secret stops at once.
             * @example 24
             */
            overlapHours?: number;
            /** @example RATE_SPIKE */
            type: components["schemas"]["WebhookEventType"];
        };
        RotateSigningKeyDto: {
            /**
             * @description Hours during which the key pair being replaced still signs: `webhook-signature` carries a `v1a` signature of each key, so a receiver still holding the old public key verifies until it has the new one. 0 (the default): the old pair stops at once.
             * @example 24
             */
            overlapHours?: number;
            /** @example RATE_SPIKE */
            type: components["schemas"]["WebhookEventType"];
        };
        /** @enum {string} */
        Severity: "INFO" | "WARNING" | "ERROR";
        /**
         * @description WEBHOOK only: which schemes sign its deliveries, one or both. `hmac`: `X-Service-Signature` and Standard Webhooks `v1,` with the signing secret. `ed25519`: Standard Webhooks `v1a,` with a key pair the service makes the first time it is chosen; its public key is answered in `signingPublicKey`. When omitted, the stored choice is kept (`["hmac"]` for a new webhook).
         * @enum {string}
         */
        SignatureScheme: "hmac" | "ed25519";
        TestSendDto: {
            type: components["schemas"]["WebhookEventType"];
        };
        TestSendResultDto: {
            durationMs: number;
            error: string | null;
            /** @enum {string} */
            outcome: "success" | "http_error" | "timeout" | "connect_error" | "blocked" | "tls_error" | "circuit_open";
            responseExcerpt: string | null;
            /** @description HTTP status of the answer; null when none came. */
            statusCode: number | null;
            success: boolean;
        };
        UpsertPreferenceDto: {
            /** @example WEBHOOK */
            channel: components["schemas"]["NotificationChannel"];
            /** @example true */
            enabled: boolean;
            /**
             * @description WEBHOOK only: ordered delivery for the webhook's URL (the one sent, else the stored one; refused without either). It is per URL: every type of yours that posts to that URL follows it. On, a delivery to the URL starts only once the one before it is DELIVERED, FAILED or CANCELLED: a retrying delivery holds up the rest (up to 5 h 21 min with the retry schedule), a FAILED one lets the next go. Claims follow a change at once; deliveries already sending go on. When omitted, the stored choice is kept (off for a new URL).
             * @example true
             */
            orderedDelivery?: boolean;
            /**
             * @description WEBHOOK only: which schemes sign its deliveries, one or both. `hmac`: `X-Service-Signature` and Standard Webhooks `v1,` with the signing secret. `ed25519`: Standard Webhooks `v1a,` with a key pair the service makes the first time it is chosen; its public key is answered in `signingPublicKey`. When omitted, the stored choice is kept (`["hmac"]` for a new webhook).
             * @example [
             *       "hmac",
             *       "ed25519"
             *     ]
             */
            signatureSchemes?: components["schemas"]["SignatureScheme"][];
            /** @example RATE_SPIKE */
            type: components["schemas"]["EventType"];
            /**
             * Format: uri
             * @description Required when enabling WEBHOOK; refused on other channels. https only, no credentials, not localhost nor a private, loopback, link-local or otherwise non-public address. When omitted while disabling, the stored URL is kept.
             * @example https://hooks.example.com/funding
             */
            webhookUrl?: string | null;
        };
        UpsertPreferenceResponseDto: {
            channel: components["schemas"]["NotificationChannel"];
            /**
             * @description Present with `disabledReasonCode`: the same in English, with the figures (failures, when).
             * @example disabled after 5 consecutive failed deliveries on 2026-11-22T12:00:00.000Z
             */
            disabledReason?: string;
            /** @description WEBHOOK rows only, present while the service itself disabled the webhook: why, as a stable code to translate. Enabling it again clears it. */
            disabledReasonCode?: components["schemas"]["WebhookDisabledReasonCode"];
            enabled: boolean;
            /** @description WEBHOOK rows only: true when a signing secret exists. The secret itself is never listed. */
            hasWebhookSecret?: boolean;
            /** @description WEBHOOK rows only: ordered delivery for this row's URL. The user's webhooks that post to one URL share it (and its `X-Service-Sequence` count): turning it on or off for one type does it for all of them. On, a delivery to the URL starts only once the one before it (lower `sequence`) is DELIVERED, FAILED or CANCELLED; one that retries holds up the rest for as long as its retries run (up to 5 h 21 min), and a FAILED one lets the next go (the gap shows in `X-Service-Sequence`). See the webhook's health (`orderedDelivery`, `waitingBehind`). */
            orderedDelivery?: boolean;
            /** @description Present during a key rotation's overlap only: the public key before it, whose private key still signs `v1a` next to the new one until `previousSigningPublicKeyValidUntil`. */
            previousSigningPublicKey?: string;
            /**
             * Format: date-time
             * @description Present with `previousSigningPublicKey`: until when the previous key pair also signs.
             */
            previousSigningPublicKeyValidUntil?: string;
            /**
             * @description WEBHOOK rows only: which schemes sign its deliveries. `hmac` (the default): `X-Service-Signature` and the Standard Webhooks `v1,` signature, with the signing secret. `ed25519`: the Standard Webhooks `v1a,` signature, with the webhook's private key, verified with `signingPublicKey`. Both: every signature is sent.
             * @example [
             *       "hmac",
             *       "ed25519"
             *     ]
             */
            signatureSchemes?: components["schemas"]["SignatureScheme"][];
            /**
             * @description WEBHOOK rows with a key pair (made when `ed25519` is first chosen): the Ed25519 public key in the Standard Webhooks format, `whpk_` and the raw 32-byte key in base64. Receivers verify `v1a` signatures with it alone; it is not a secret. The private key is never returned.
             * @example whpk_FLCTO+FlSFv2PDkGs2Ma3XnowfB7Mx4Sb4X3elqWa1c=
             */
            signingPublicKey?: string;
            type: components["schemas"]["EventType"];
            /** Format: date-time */
            updatedAt: string;
            /**
             * @description The signing secret, returned exactly once: in the response to the first enable of WEBHOOK for this event type. It cannot be retrieved later. The HMAC key is this whole string, UTF-8 encoded.
             * @example whsec_hX1vC0m0cQ4J1s0tY2rRrKpZfI5lqGm4H0y9qkM1fZ8=
             */
            webhookSecret?: string;
            /**
             * Format: uri
             * @description WEBHOOK rows only.
             */
            webhookUrl?: string | null;
        };
        /**
         * @description WEBHOOK rows only, present while the service itself disabled the webhook: why, as a stable code to translate. Enabling it again clears it.
         * @enum {string}
         */
        WebhookDisabledReasonCode: "CONSECUTIVE_FAILURES";
        WebhookEventBodyDto: {
            /** @example The FRR moved from 0.02% to 0.08% in 5 minutes. */
            body: string;
            /**
             * Format: date-time
             * @description When the event happened (ISO-8601, UTC).
             */
            createdAt: string;
            /** @description Type-specific fields; `{}` when there are none. */
            payload: {
                [key: string]: unknown;
            };
            severity: components["schemas"]["Severity"];
            /** @example USD rate spiked to 0.08% daily */
            title: string;
            /** @example RATE_SPIKE */
            type: components["schemas"]["WebhookEventType"];
            /**
             * @description The user the event is for.
             * @example 42
             */
            userId: number;
        };
        /**
         * @description The event types that can be delivered to a webhook (spec 6.2). The others, EARNINGS_MILESTONE, HIGH_UTILIZATION, OFFER_FILLED, WITHDRAWAL_DETECTED, are managed by the service and refuse WEBHOOK: a settings screen hides their WEBHOOK toggle (the effective view has no WEBHOOK row for them).
         * @enum {string}
         */
        WebhookEventType: "RATE_SPIKE" | "RATE_DROP" | "RATE_FLOOR_BLOCKED" | "LOAN_EXECUTED" | "LOAN_EXPIRING" | "LOAN_EARLY_REPAID" | "LARGE_EARLY_REPAYMENT" | "LARGE_LOAN_FILLED" | "STALE_OFFER" | "KILL_SWITCH_ACTIVATED" | "STRATEGY_PAUSED" | "STRATEGY_ERROR" | "STRATEGY_TICK_STALE" | "API_KEY_INVALID" | "API_KEY_PERMISSIONS_CHANGED" | "PLATFORM_OUTAGE" | "PLATFORM_RECOVERED" | "SYSTEM_ALERT" | "LOW_UTILIZATION" | "IDLE_CASH" | "FEE_TIER_CHANGED" | "DAILY_DIGEST" | "WEEKLY_DIGEST" | "MONTHLY_DIGEST" | "YEARLY_DIGEST";
        WebhookHealthDto: {
            /**
             * Format: date-time
             * @description With `CIRCUIT_OPEN`: when the next probe may go (may be past: the next attempt probes).
             */
            circuitOpenUntil: string | null;
            /**
             * Format: date-time
             * @description When auto-disable last turned the webhook off; null if it never did.
             */
            disabledAt: string | null;
            /** @description With `DISABLED`: why, in English, with the figures. */
            disabledReason?: string;
            /** @description With `DISABLED`. */
            disabledReasonCode?: components["schemas"]["WebhookDisabledReasonCode"];
            enabled: boolean;
            /** @description Attempts in a row that failed since the last 2xx (skipped attempts not counted). */
            failedAttemptsInRow: number;
            /**
             * Format: date-time
             * @description When the first of those failed attempts started; null when there are none.
             */
            failingSince: string | null;
            /** @description The latest attempt that made (or was refused before) a request; absent before the first one. */
            lastAttempt?: components["schemas"]["WebhookLastAttemptDto"];
            /**
             * Format: date-time
             * @description When the latest attempt answered with a 2xx started.
             */
            lastSuccessAt: string | null;
            /** @description Ordered delivery is on for this webhook's URL (see `orderedDelivery` on the preference). */
            orderedDelivery: boolean;
            /** @description With `orderedDelivery`: the first PENDING delivery to this URL (any of the user's types that post there), which the others wait for while it retries (up to 5 h 21 min; it lets them go once DELIVERED, FAILED or CANCELLED). Absent when nothing to this URL is PENDING. */
            orderedHead?: components["schemas"]["OrderedHeadDto"];
            /** @description `OFF`: the user turned the webhook off. `DISABLED`: the service turned it off (auto-disable; see `disabledReason`). `CIRCUIT_OPEN`: its endpoint stopped answering, attempts are skipped without a request until `circuitOpenUntil`, then one probe goes; a 2xx closes it. `FAILING`: at least the configured number of attempts in a row failed (default 3). `HEALTHY` otherwise (fewer failures show in `failedAttemptsInRow`). */
            state: components["schemas"]["WebhookHealthState"];
            type: components["schemas"]["EventType"];
            /** @description With `orderedDelivery`: PENDING deliveries to this URL waiting behind `orderedHead` (0 otherwise). */
            waitingBehind: number;
            /** @description Deliveries of this type waiting for their next attempt (PENDING). Counted among at most 10,000 of the user's waiting deliveries: past that, a lower bound. */
            waitingDeliveries: number;
            /** Format: uri */
            webhookUrl: string | null;
        };
        /**
         * @description `OFF`: the user turned the webhook off. `DISABLED`: the service turned it off (auto-disable; see `disabledReason`). `CIRCUIT_OPEN`: its endpoint stopped answering, attempts are skipped without a request until `circuitOpenUntil`, then one probe goes; a 2xx closes it. `FAILING`: at least the configured number of attempts in a row failed (default 3). `HEALTHY` otherwise (fewer failures show in `failedAttemptsInRow`).
         * @enum {string}
         */
        WebhookHealthState: "HEALTHY" | "FAILING" | "CIRCUIT_OPEN" | "DISABLED" | "OFF";
        WebhookLastAttemptDto: {
            /**
             * Format: date-time
             * @description When the attempt started.
             */
            at: string;
            /** @description Why it failed, as the delivery log says it (at most 255 characters; no header values or bodies); null on success. */
            error: string | null;
            /** @enum {string} */
            outcome: "success" | "http_error" | "timeout" | "connect_error" | "blocked" | "tls_error";
            /** @description HTTP status of the answer; null when none came. */
            statusCode: number | null;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    publishEvents: {
        parameters: {
            query?: never;
            header?: {
                /** @description One key per request (the whole batch), 1 to 255 visible ASCII characters, e.g. a UUID made once and kept for every retry of that request. Within 24 h (`RETENTION_IDEMPOTENCY_KEY_HOURS`), the same key with the same events answers 202 with the first call's `eventIds` and `queuedDeliveries` and `replayed: true`, storing and sending nothing new, on any instance; with other events it answers 409. A call made while the first is still committing waits for it and answers its result (or 503 when that takes longer than the publish deadline; retry). Keys belong to the bearer token: another token never sees them. The events compare as JSON values (payload key order and the spelling of `createdAt` aside); an event without `createdAt` takes the first call's publish time. */
                "Idempotency-Key"?: string;
                /** @description W3C Trace Context (level 1): the span that publishes. Every attempt of these events (retries, redeliveries and recoveries included) sends a `traceparent` with the same trace id, a span id of its own per attempt (a child span of the publish) and the same sampled flag, so receivers can join the trace. Parsed as W3C says: version `00` exactly (lowercase hex, trace id and parent id not all zero; the flags other than sampled are sent as zero), a later version by its version 00 fields. An invalid value is ignored, as W3C tells receivers to do (the publish goes on, untraced), never a 400. */
                traceparent?: string;
                /** @description W3C Trace Context vendor data, taken only with a valid `traceparent` and forwarded unchanged with every attempt. Invalid: ignored. Longer than 512 characters: cut as W3C says (members over 128 characters first, then from the end). */
                tracestate?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PublishEventDto"] | components["schemas"]["PublishEventsDto"];
            };
        };
        responses: {
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublishResultDto"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Not found (also for another user's ids, so ids do not leak). */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description The `Idempotency-Key` was used within its window for different events; nothing was stored. Use a new key. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body larger than the limit (1 MB by default). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body is not `application/json`, or a request without a body lacks `Content-Type: application/json` (required on every state-changing request: cross-site request forgery). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Not acknowledged: the database is unavailable or did not commit in time; retry after `Retry-After` seconds. */
            503: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    listPreferences: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PreferenceDto"][];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    upsertPreference: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["UpsertPreferenceDto"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UpsertPreferenceResponseDto"];
                };
            };
            /** @description Invalid field; `errors` names it. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body larger than the limit (1 MB by default). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body is not `application/json`, or a request without a body lacks `Content-Type: application/json` (required on every state-changing request: cross-site request forgery). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    listEffectivePreferences: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EffectivePreferenceDto"][];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    listDeliveries: {
        parameters: {
            query?: {
                /** @description Opaque: pass the `nextCursor` of the previous page unchanged. */
                cursor?: string;
                limit?: number;
                status?: components["schemas"]["DeliveryStatus"];
                type?: components["schemas"]["EventType"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryPageDto"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    getDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryDetailDto"];
                };
            };
            /** @description Invalid input: `errors[]` names each bad field (also malformed JSON and reserved keys such as `__proto__`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description No such delivery for this user. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    redeliver: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryDto"];
                };
            };
            /** @description Invalid input: `errors[]` names each bad field (also malformed JSON and reserved keys such as `__proto__`). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description A delivery of the event is still PENDING (its retry cycle is running); redeliver once it has ended. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body larger than the limit (1 MB by default). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body is not `application/json`, or a request without a body lacks `Content-Type: application/json` (required on every state-changing request: cross-site request forgery). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    recoverDeliveries: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RecoverDeliveriesDto"];
            };
        };
        responses: {
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecoverResultDto"];
                };
            };
            /** @description A bad `since`/`until`/`type`, `until` before `since`, or a window over 90 days. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body larger than the limit (1 MB by default). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body is not `application/json`, or a request without a body lacks `Content-Type: application/json` (required on every state-changing request: cross-site request forgery). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    listWebhookHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookHealthDto"][];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    rotateSigningSecret: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RotateSecretDto"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RotatedSecretResponseDto"];
                };
            };
            /** @description Unknown event type; `errors` names the field. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description No webhook is configured for this event type. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body larger than the limit (1 MB by default). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body is not `application/json`, or a request without a body lacks `Content-Type: application/json` (required on every state-changing request: cross-site request forgery). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    rotateSigningKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RotateSigningKeyDto"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PreferenceDto"];
                };
            };
            /** @description Unknown event type or bad overlap; `errors` names the field. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description No webhook is configured for this event type. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body larger than the limit (1 MB by default). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body is not `application/json`, or a request without a body lacks `Content-Type: application/json` (required on every state-changing request: cross-site request forgery). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    sendTestEvent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TestSendDto"];
            };
        };
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TestSendResultDto"];
                };
            };
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Missing, invalid or expired bearer token. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body larger than the limit (1 MB by default). */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Request body is not `application/json`, or a request without a body lacks `Content-Type: application/json` (required on every state-changing request: cross-site request forgery). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Rate limit exceeded; `Retry-After` gives the seconds to wait. */
            429: {
                headers: {
                    /** @description Seconds to wait before sending the request again. */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
            /** @description Unexpected error; the body never holds internals, the server logs the details. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorResponseDto"];
                };
            };
        };
    };
    receiveFundingEvent: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description W3C Trace Context, only when the event was published in a trace: the trace id of the publish, this attempt's own span id (a new one per attempt), the sampled flag. Not signed: use it to join the trace, never to decide anything.
                 * @example 00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01
                 */
                traceparent?: string;
                /**
                 * @description W3C Trace Context vendor data, as the publisher sent it, when it sent one with its `traceparent`. Not signed.
                 * @example rojo=00f067aa0ba902b7
                 */
                tracestate?: string;
                /**
                 * @description The service and its public site.
                 * @example Service/0.1.0 (+https://funding.example.com)
                 */
                "User-Agent": string;
                /** @description Standard Webhooks: the event id, the same as `X-Service-Event-Id`. */
                "webhook-id": string;
                /** @description Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `"<webhook-id>.<webhook-timestamp>.<raw body>"`, keyed with the bytes the base64 after `whsec_` encodes; several, space-separated, during a secret rotation. Any official Standard Webhooks library verifies it. */
                "webhook-signature": string;
                /**
                 * @description Standard Webhooks: the same as `X-Service-Timestamp`.
                 * @example 1763800000
                 */
                "webhook-timestamp": number;
                /** @description Attempt number within this delivery, from 1. */
                "X-Service-Attempt": number;
                /** @description Stable id of the event: the same on every retry and redelivery. */
                "X-Service-Event-Id": string;
                /**
                 * @description The delivery's number among the events sent to this URL for this user, given when the event was published: 1, 2, 3… in publish order, without gaps, across event types. The same on every retry and redelivery of the event. A number higher than the last one seen plus one says that one is missing (still being retried, FAILED, or sent to another URL), a lower one that it comes late (a retry, a redelivery). Counted per URL: a new URL starts at 1. Not signed. Absent on test sends.
                 * @example 42
                 */
                "X-Service-Sequence"?: number;
                /** @description HMAC-SHA256 signature of `"<timestamp>.<raw body>"`. */
                "X-Service-Signature": string;
                /**
                 * @description Unix time in seconds when this attempt was signed.
                 * @example 1763800000
                 */
                "X-Service-Timestamp": number;
                /**
                 * @description The event type, as in the body.
                 * @example RATE_SPIKE
                 */
                "X-Service-Type": "RATE_SPIKE" | "RATE_DROP" | "RATE_FLOOR_BLOCKED" | "LOAN_EXECUTED" | "LOAN_EXPIRING" | "LOAN_EARLY_REPAID" | "LARGE_EARLY_REPAYMENT" | "LARGE_LOAN_FILLED" | "STALE_OFFER" | "KILL_SWITCH_ACTIVATED" | "STRATEGY_PAUSED" | "STRATEGY_ERROR" | "STRATEGY_TICK_STALE" | "API_KEY_INVALID" | "API_KEY_PERMISSIONS_CHANGED" | "PLATFORM_OUTAGE" | "PLATFORM_RECOVERED" | "SYSTEM_ALERT" | "LOW_UTILIZATION" | "IDLE_CASH" | "FEE_TIER_CHANGED" | "DAILY_DIGEST" | "WEEKLY_DIGEST" | "MONTHLY_DIGEST" | "YEARLY_DIGEST";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEventBodyDto"];
            };
        };
        responses: {
            /** @description Delivered. The body is ignored (at most 1 KiB is kept in the delivery log). */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Failed: the attempt is retried on the schedule above. */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
