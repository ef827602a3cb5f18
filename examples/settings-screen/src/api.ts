// The settings API, typed by the published OpenAPI types only. Calls name their path and method, never an operationId.
import type { components, paths } from '@funding/notification-webhooks/openapi-types';
import createClient, { type Middleware } from 'openapi-fetch';

type Schemas = components['schemas'];
export type EventType = Schemas['EventType'];
/** The types that can be delivered to a webhook (test sends and secret rotation take only these). */
export type WebhookEventType = Schemas['WebhookEventType'];
export type EffectiveRow = Schemas['EffectivePreferenceDto'];
export type SignatureScheme = Schemas['SignatureScheme'];
export type Delivery = Schemas['DeliveryDto'];
export type DeliveryDetail = Schemas['DeliveryDetailDto'];
export type Attempt = Schemas['AttemptDto'];
export type TestSendResult = Schemas['TestSendResultDto'];
export type WebhookHealth = Schemas['WebhookHealthDto'];
export type OrderedHead = Schemas['OrderedHeadDto'];
export type RecoverResult = Schemas['RecoverResultDto'];
type ErrorBody = Schemas['ErrorResponseDto'];

/** Why a call failed, ready to show: a summary, the messages per field, and how long to wait on a 429. */
export interface ApiFailure {
  readonly status: number;
  readonly message: string;
  readonly fieldErrors: Readonly<Record<string, string>>;
  readonly retryAfterSeconds?: number;
}

export type ApiResult<T> = { ok: true; data: T } | { ok: false; failure: ApiFailure };

/** A settings API client for one user's bearer token; `baseUrl` '' calls the page's own origin. */
export function settingsApi(token: string, baseUrl = '') {
  const client = createClient<paths>({ baseUrl });
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      // The API requires it on every state-changing request, with a body or not (redeliver has none): a cross-site
      // form cannot send it. openapi-fetch sets it only when there is a body.
      if (request.method !== 'GET') request.headers.set('Content-Type', 'application/json');
      return request;
    },
  };
  client.use(auth);
  return {
    effective: async () => settle(await client.GET('/api/v1/settings/notifications/effective')),
    health: async () => settle(await client.GET('/api/v1/settings/notifications/webhook-health')),
    saveWebhook: async (type: EventType, enabled: boolean, webhookUrl: string) =>
      settle(
        await client.PUT('/api/v1/settings/notifications', {
          body: { type, channel: 'WEBHOOK', enabled, ...(webhookUrl || enabled ? { webhookUrl } : {}) },
        }),
      ),
    /** Which schemes sign an enabled webhook's deliveries (ed25519 makes its key pair; the row then shows the public key). */
    setSignatureSchemes: async (type: EventType, webhookUrl: string, signatureSchemes: SignatureScheme[]) =>
      settle(
        await client.PUT('/api/v1/settings/notifications', {
          body: { type, channel: 'WEBHOOK', enabled: true, webhookUrl, signatureSchemes },
        }),
      ),
    /**
     * Ordered delivery for the webhook's URL (every type of the user that posts to that URL follows it): one delivery at
     * a time, in publish order. Sent with the saved URL and the webhook on, as the row shows it.
     */
    setOrderedDelivery: async (type: EventType, webhookUrl: string, orderedDelivery: boolean) =>
      settle(
        await client.PUT('/api/v1/settings/notifications', {
          body: { type, channel: 'WEBHOOK', enabled: true, webhookUrl, orderedDelivery },
        }),
      ),
    sendTest: async (type: WebhookEventType) =>
      settle(await client.POST('/api/v1/settings/notifications/webhook/test', { body: { type } })),
    rotateSecret: async (type: WebhookEventType) =>
      settle(await client.POST('/api/v1/settings/notifications/webhook/rotate-secret', { body: { type } })),
    deliveries: async () =>
      settle(await client.GET('/api/v1/settings/notifications/webhook-deliveries', { params: { query: { limit: 20 } } })),
    delivery: async (id: number) =>
      settle(await client.GET('/api/v1/settings/notifications/webhook-deliveries/{id}', { params: { path: { id } } })),
    /** Queues a new cycle for the deliveries of `type` that ended FAILED from `since` (RFC 3339) until now. */
    recover: async (type: EventType, since: string) =>
      settle(await client.POST('/api/v1/settings/notifications/webhook-deliveries/recover', { body: { type, since } })),
    redeliver: async (id: number) =>
      settle(await client.POST('/api/v1/settings/notifications/webhook-deliveries/{id}/redeliver', { params: { path: { id } } })),
  };
}

export type SettingsApi = ReturnType<typeof settingsApi>;

type FetchAnswer<T> = { data?: T; error?: unknown; response: Response };

function settle<T>(answer: FetchAnswer<T>): ApiResult<T> {
  if (answer.response.ok) return { ok: true, data: answer.data as T };
  return { ok: false, failure: failureOf(answer.response, answer.error) };
}

function failureOf(response: Response, error: unknown): ApiFailure {
  const body = isErrorBody(error) ? error : undefined;
  const fieldErrors = Object.fromEntries((body?.errors ?? []).map((e) => [e.field, e.message]));
  const retryAfter = Number(response.headers.get('Retry-After'));
  return {
    status: response.status,
    message: body?.message ?? `The service answered ${response.status} ${response.statusText}`.trim(),
    fieldErrors,
    ...(response.status === 429 && Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterSeconds: Math.ceil(retryAfter) } : {}),
  };
}

function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as ErrorBody).message === 'string';
}
