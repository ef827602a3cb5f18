// Compiled by `npm run typecheck` against the generated types: if an endpoint, a parameter or a field changes in
// openapi.json, this file stops compiling. It is what a frontend team would write.
import type { paths } from '@funding/notification-webhooks/openapi-types';
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
    '/api/v1/settings/notifications/webhook/rotate-secret': {
      rotateSecret: (body: BodyOf<'/api/v1/settings/notifications/webhook/rotate-secret', 'post'>) =>
        call('post', '/api/v1/settings/notifications/webhook/rotate-secret', { body }),
    },
    '/api/v1/settings/notifications/webhook/test': {
      sendTest: (body: BodyOf<'/api/v1/settings/notifications/webhook/test', 'post'>) =>
        call('post', '/api/v1/settings/notifications/webhook/test', { body }),
    },
  } satisfies Record<SettingsPath, object>; // a settings endpoint added to the API without a call here fails typecheck
  return Object.assign({}, ...Object.values(endpoints)) as UnionToIntersection<(typeof endpoints)[SettingsPath]>;
}

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;

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
    for (const row of rows.data) console.log(row.type, row.channel, row.enabled, row.source, secretShownOnce ? 'new secret' : '');
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
  await api.rotateSecret({ type: 'RATE_SPIKE' });
  await api.sendTest({ type: 'RATE_SPIKE' });
  await api.list();
}
