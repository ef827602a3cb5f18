// Compiled by `npm run typecheck` against the generated types: if an endpoint, a parameter or a field changes in
// openapi.json, this file stops compiling. It is what a frontend team would write.
import type { components, paths } from '@funding/notification-webhooks/openapi-types';
import { type BodyOf, type QueryOf, typedFetch } from './typed-fetch';

type SettingsPath = Extract<keyof paths, `/api/v1/settings/${string}`>;

/** The settings API of one user, from a browser or any fetch-capable runtime. */
export function settingsClient(baseUrl: string, token: string) {
  const call = typedFetch(baseUrl, () => ({ authorization: `Bearer ${token}` }));
  const endpoints = {
    '/api/v1/settings/notifications': {
      list: () => call('get', '/api/v1/settings/notifications'),
      upsert: (body: BodyOf<'/api/v1/settings/notifications', 'put'>) => call('put', '/api/v1/settings/notifications', { body }),
    },
    '/api/v1/settings/notifications/effective': {
      effective: () => call('get', '/api/v1/settings/notifications/effective'),
    },
    '/api/v1/settings/notifications/webhook-deliveries': {
      deliveries: (query: QueryOf<'/api/v1/settings/notifications/webhook-deliveries', 'get'> = {}) =>
        call('get', '/api/v1/settings/notifications/webhook-deliveries', { query }),
    },
    '/api/v1/settings/notifications/webhook-deliveries/recover': {
      recover: (body: BodyOf<'/api/v1/settings/notifications/webhook-deliveries/recover', 'post'>) =>
        call('post', '/api/v1/settings/notifications/webhook-deliveries/recover', { body }),
    },
    '/api/v1/settings/notifications/webhook-deliveries/{id}': {
      delivery: (id: number) => call('get', '/api/v1/settings/notifications/webhook-deliveries/{id}', { params: { id } }),
    },
    '/api/v1/settings/notifications/webhook-deliveries/{id}/redeliver': {
      redeliver: (id: number) => call('post', '/api/v1/settings/notifications/webhook-deliveries/{id}/redeliver', { params: { id } }),
    },
    '/api/v1/settings/notifications/webhook-health': {
      webhookHealth: () => call('get', '/api/v1/settings/notifications/webhook-health'),
    },
    '/api/v1/settings/notifications/webhook/rotate-secret': {
      rotateSecret: (body: BodyOf<'/api/v1/settings/notifications/webhook/rotate-secret', 'post'>) =>
        call('post', '/api/v1/settings/notifications/webhook/rotate-secret', { body }),
    },
    '/api/v1/settings/notifications/webhook/rotate-signing-key': {
      rotateSigningKey: (body: BodyOf<'/api/v1/settings/notifications/webhook/rotate-signing-key', 'post'>) =>
        call('post', '/api/v1/settings/notifications/webhook/rotate-signing-key', { body }),
    },
    '/api/v1/settings/notifications/webhook/test': {
      sendTest: (body: BodyOf<'/api/v1/settings/notifications/webhook/test', 'post'>) =>
        call('post', '/api/v1/settings/notifications/webhook/test', { body }),
    },
  } satisfies Record<SettingsPath, object>; // a settings endpoint added to the API without a call here fails typecheck
  return Object.assign({}, ...Object.values(endpoints)) as UnionToIntersection<(typeof endpoints)[SettingsPath]>;
}

export type SettingsClient = ReturnType<typeof settingsClient>;
type Delivery = components['schemas']['DeliveryDto'];

/** Every delivery that matches `query`, newest first: page after page, each `nextCursor` passed back as `cursor`. */
export async function* allDeliveries(
  api: SettingsClient,
  query: Omit<QueryOf<'/api/v1/settings/notifications/webhook-deliveries', 'get'>, 'cursor'> = {},
): AsyncGenerator<Delivery> {
  let cursor: string | undefined;
  do {
    const page = await api.deliveries({ ...query, cursor });
    if (!page.ok) throw new Error(`listing deliveries answered ${page.status}: ${page.error.message}`);
    yield* page.data.data;
    cursor = page.data.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;

/** A translation per auto-disable code: a code added to the API fails typecheck here until it is translated. */
const DISABLED_REASON_TEXT: Record<components['schemas']['WebhookDisabledReasonCode'], string> = {
  CONSECUTIVE_FAILURES: 'Turned off after repeated failed deliveries. Fix your endpoint, then turn it on again.',
};

// What the settings screen does with it: each line compiles only while the API keeps these shapes.
export async function settingsScreenExample(baseUrl: string, token: string): Promise<void> {
  const api = settingsClient(baseUrl, token);
  const saved = await api.upsert({
    type: 'RATE_SPIKE',
    channel: 'WEBHOOK',
    enabled: true,
    webhookUrl: 'https://hooks.example.com/funding',
  });
  if (!saved.ok) {
    const fieldErrors: Record<string, string> = Object.fromEntries((saved.error.errors ?? []).map((e) => [e.field, e.message]));
    console.log(saved.error.message, fieldErrors.webhookUrl);
    return;
  }
  const secretShownOnce: string | undefined = saved.data.webhookSecret;
  const rows = await api.effective();
  if (rows.ok)
    for (const row of rows.data) {
      const note = row.disabledReasonCode ? DISABLED_REASON_TEXT[row.disabledReasonCode] : '';
      console.log(row.type, row.channel, row.enabled, row.source, note, secretShownOnce ? 'new secret' : '');
    }
  for await (const delivery of allDeliveries(api, { status: 'FAILED' })) console.log(delivery.id, delivery.lastStatusCode);
  const page = await api.deliveries({ status: 'FAILED', limit: 20 });
  if (page.ok) {
    for (const delivery of page.data.data) {
      const detail = await api.delivery(delivery.id);
      if (detail.ok) console.log(detail.data.attempts.map((a) => a.attemptNumber));
      await api.redeliver(delivery.id);
    }
  }
  const recovered = await api.recover({ since: '2026-11-24T08:00:00Z', type: 'RATE_SPIKE' });
  if (recovered.ok) console.log(recovered.data.queued, recovered.data.more ? 'call again for the rest' : 'all queued');
  const health = await api.webhookHealth();
  if (health.ok)
    for (const webhook of health.data) {
      const last = webhook.lastAttempt ? `last: ${webhook.lastAttempt.statusCode ?? webhook.lastAttempt.error}` : 'no attempt yet';
      console.log(
        webhook.type,
        webhook.state,
        webhook.failedAttemptsInRow,
        webhook.failingSince,
        webhook.circuitOpenUntil,
        webhook.waitingDeliveries,
        last,
      );
    }
  await api.rotateSecret({ type: 'RATE_SPIKE' });
  await api.sendTest({ type: 'RATE_SPIKE' });
  await api.list();
}
