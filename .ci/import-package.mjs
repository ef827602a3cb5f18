// Run by check-package.sh in a host app that installed the tarball: import()s every entry, as an ES module host does.
import assert from 'node:assert/strict';

const library = await import('@funding/notification-webhooks');
assert.equal(typeof library.NotificationsModule.forRoot, 'function');
assert.equal(typeof library.verifyWebhookSignature, 'function');
const testing = await import('@funding/notification-webhooks/testing');
assert.equal(typeof testing.bootTestNotifications, 'function');
await import('@funding/notification-webhooks/openapi-types');
const { default: document } = await import('@funding/notification-webhooks/openapi.json', { with: { type: 'json' } });
assert.match(document.openapi, /^3\./);
const { default: vectors } = await import('@funding/notification-webhooks/signature-vectors.json', { with: { type: 'json' } });
assert.ok(Object.keys(vectors).length > 0);
console.log(`package check: Node ${process.version} imports every entry as an ES module`);
