// Run by check-package.sh (when TEST_MYSQL_URL is set) in a host app that installed the tarball plus its own driver
// (mysql2) and HTTP platform, without @nestjs/swagger: boots NotificationsModule on MariaDB and calls the settings API.
const assert = require('node:assert/strict');
const { randomBytes } = require('node:crypto');
require('reflect-metadata');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { ScheduleModule } = require('@nestjs/schedule');
const { TypeOrmModule } = require('@nestjs/typeorm');
const { createConnection } = require('mysql2/promise');
const { NOTIFICATIONS_MIGRATIONS, NotificationsModule, signUserToken } = require('@funding/notification-webhooks');

async function main() {
  const server = process.env.TEST_MYSQL_URL;
  const name = `nw_package_${randomBytes(6).toString('hex')}`;
  const admin = await createConnection({ uri: server });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const jwtSecret = randomBytes(32).toString('hex');
  const imports = [
    TypeOrmModule.forRoot({
      type: 'mysql',
      url: url.toString(),
      timezone: 'Z',
      autoLoadEntities: true,
      migrations: NOTIFICATIONS_MIGRATIONS,
      migrationsRun: true,
    }),
    ScheduleModule.forRoot(),
    NotificationsModule.forRoot({ jwtSecret, encryptionKeys: [{ id: 'k1', key: randomBytes(32) }] }),
  ];
  class HostAppModule {}
  Module({ imports })(HostAppModule);
  const app = await NestFactory.create(HostAppModule, { logger: ['error'] });
  try {
    await app.listen(0, '127.0.0.1');
    const settings = `${await app.getUrl()}/api/v1/settings/notifications`;
    const authorization = `Bearer ${signUserToken(jwtSecret, 7)}`;
    const listed = await fetch(settings, { headers: { authorization } });
    assert.equal(listed.status, 200);
    const refused = await fetch(settings, {
      method: 'PUT',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: 'yes' }),
    });
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify(await refused.json()), /enabled/);
  } finally {
    await app.close();
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
  }
  console.log(
    `package check: Node ${process.version} boots NotificationsModule on MariaDB without @nestjs/swagger; the settings API answers and validates`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
