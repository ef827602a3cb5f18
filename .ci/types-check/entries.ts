// Type-checked by check-package.sh in a host app with the tarball, under each moduleResolution docs/host-apps.md names.
import { NotificationsModule, verifyWebhookSignature, WebhookPublisher } from '@funding/notification-webhooks';
import { startTestReceiver, type TestReceiver } from '@funding/notification-webhooks/testing';
import type { components, paths } from '@funding/notification-webhooks/openapi-types';
import document from '@funding/notification-webhooks/openapi.json';
import vectors from '@funding/notification-webhooks/signature-vectors.json';

export const forRoot: typeof NotificationsModule.forRoot = NotificationsModule.forRoot;
export const verified: boolean = verifyWebhookSignature({
  secret: 'whsec_x',
  timestamp: '1',
  signature: 'v1=00',
  rawBody: '{}',
  toleranceSeconds: 300,
});
export type Publish = WebhookPublisher['publish'];
export const receiver: () => Promise<TestReceiver> = startTestReceiver;
export type Settings = paths['/api/v1/settings/notifications']['get'];
export type Preference = components['schemas'];
export const version: string = document.openapi;
export const loaded: unknown = vectors;
