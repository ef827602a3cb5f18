// Run by check-package.sh in a host app that installed the tarball: require()s every entry, as a CommonJS host does.
const assert = require('node:assert/strict');
const { existsSync } = require('node:fs');

// The library's optional peers (the testing kit's, the platform, the drivers, @nestjs/swagger: the host's choice) and the
// standalone service's own packages, which the library's manifest does not name: a bare host gets none of them.
const OPTIONAL_PEERS = [
  '@nestjs/swagger',
  'nestjs-pino',
  'pino',
  'pino-http',
  '@nestjs/terminus',
  '@nestjs/platform-express',
  'better-sqlite3',
  'mysql2',
  'selfsigned',
];
const NEVER_LOADED = [...OPTIONAL_PEERS, 'swagger-ui-dist'];

const library = require('@funding/notification-webhooks');
assert.equal(typeof library.NotificationsModule.forRoot, 'function');
assert.equal(typeof library.WebhookPublisher, 'function');
const testing = require('@funding/notification-webhooks/testing');
assert.equal(typeof testing.bootTestNotifications, 'function');
require('@funding/notification-webhooks/openapi-types');
const document = require('@funding/notification-webhooks/openapi.json');
assert.match(document.openapi, /^3\./);

const loaded = new Set(Object.keys(require.cache).flatMap((path) => path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g) ?? []));
const loadedNames = [...loaded].map((segment) => segment.slice('node_modules/'.length, -1));
assert.deepEqual(
  NEVER_LOADED.filter((name) => loadedNames.includes(name)),
  [],
  'optional peers loaded by the library entries',
);
assert.deepEqual(
  OPTIONAL_PEERS.filter((name) => existsSync(`node_modules/${name}`)),
  [],
  'optional peers installed in the host',
);
console.log(`package check: Node ${process.version} requires every entry, loading none of ${NEVER_LOADED.join(', ')}`);
