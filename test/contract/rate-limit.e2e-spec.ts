import { Controller, Get, Module } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import request from 'supertest';
import { NOTIFICATIONS_MIGRATIONS, NotificationsModule } from '../../src';
import { databaseOptions } from '../../src/service/database/database-options';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { startTestApp } from '../support/test-app';
import type { TestDatabase } from '../support/test-databases';
import { DELIVERIES, SETTINGS } from '../support/settings-api';

const MINUTE = 60_000;

describeEachDatabase('rate limits on $name', (kind) => {
  const t = appWithKitPerSuite(kind, {
    rateLimits: { settings: { limit: 6, ttlMs: MINUTE }, testSend: { limit: 2, ttlMs: MINUTE }, redeliver: { limit: 2, ttlMs: MINUTE } },
  });
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
  });

  const get = (path = SETTINGS, id = userId) => t.http().get(path).set('Authorization', t.bearer(id));
  const testSend = (id = userId) =>
    t.http().post(`${SETTINGS}/webhook/test`).set('Authorization', t.bearer(id)).send({ type: 'RATE_SPIKE' });
  const redeliver = (id = userId) =>
    t.http().post(`${DELIVERIES}/999999/redeliver`).set('Authorization', t.bearer(id)).set('Content-Type', 'application/json');

  it('answers 429 with Retry-After and the error shape once a user spent the settings budget, across endpoints', async () => {
    for (let i = 0; i < 3; i++) await get().expect(200);
    for (let i = 0; i < 3; i++) await get(`${SETTINGS}/effective`).expect(200);
    const refused = await get().expect(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: 'Too many requests: at most 6 per 60 s; retry after 60 s',
    });
  });

  it('counts per user: another user is not limited by the first one', async () => {
    for (let i = 0; i < 6; i++) await get().expect(200);
    await get().expect(429);
    await get(SETTINGS, userId + 10_000).expect(200);
  });

  it('counts down Retry-After with the clock and lets the user in again after the window', async () => {
    for (let i = 0; i < 6; i++) await get().expect(200);
    t.advance(20_000);
    expect((await get().expect(429)).headers['retry-after']).toBe('40');
    t.advance(40_000);
    await get().expect(200);
  });

  it('limits the test send much more strictly than the rest, without spending the other endpoints', async () => {
    // No webhook is configured, so each allowed call answers 400; it still counts, and nothing is sent.
    await testSend().expect(400);
    await testSend().expect(400);
    const refused = await testSend().expect(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.body.message).toBe('Too many requests: at most 2 per 60 s; retry after 60 s');
    await redeliver().expect(404);
    await get().expect(200);
  });

  it('limits redeliver on its own stricter budget', async () => {
    await redeliver().expect(404);
    await redeliver().expect(404);
    await redeliver().expect(429);
    await testSend().expect(400);
  });

  it('limits unauthenticated callers by IP before authentication', async () => {
    t.advance(MINUTE); // a fresh window for the loopback IP, whatever earlier tests spent
    for (let i = 0; i < 6; i++) await t.http().get(SETTINGS).set('Authorization', 'Bearer not.a.jwt').expect(401);
    const refused = await t.http().get(SETTINGS).expect(429);
    expect(refused.headers['retry-after']).toBe('60');
    await get().expect(200);
  });

  it('can be turned off', async () => {
    const unlimited = await startTestApp(kind, { rateLimits: false });
    try {
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          unlimited.http().post(`${SETTINGS}/webhook/test`).set('Authorization', unlimited.bearer(1)).send({ type: 'RATE_SPIKE' }),
        ),
      );
      expect(new Set(responses.map((r) => r.status))).toEqual(new Set([400]));
    } finally {
      await unlimited.close();
    }
  });

  it('applies the defaults (5 test sends per minute) when none are given', async () => {
    const defaults = await startTestApp(kind);
    try {
      const send = () =>
        defaults.http().post(`${SETTINGS}/webhook/test`).set('Authorization', defaults.bearer(1)).send({ type: 'RATE_SPIKE' });
      for (let i = 0; i < 5; i++) await send().expect(400);
      await send().expect(429);
    } finally {
      await defaults.close();
    }
  });
});

@Controller('host')
class HostController {
  @Get('ping')
  ping(): { ok: boolean } {
    return { ok: true };
  }
}

@Module({ controllers: [HostController] })
class HostRoutesModule {}

describeEachDatabase('rate limits inside a host app on $name', (kind) => {
  let database: TestDatabase;
  let app: INestApplication;

  beforeAll(async () => {
    database = await kind.create();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        TypeOrmModule.forRoot({
          ...databaseOptions(database.config),
          entities: [],
          autoLoadEntities: true,
          migrations: NOTIFICATIONS_MIGRATIONS,
          migrationsRun: true,
        }),
        HostRoutesModule,
        NotificationsModule.forRoot({
          resolveUserId: (req: Request) => Number(req.headers['x-host-user']) || undefined,
          encryptionKeys: [{ id: 'host', key: randomBytes(32) }],
          rateLimits: { settings: { limit: 3, ttlMs: MINUTE } },
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app.close();
    await database.drop();
  });

  it("limits the module's endpoints but never the host's own routes", async () => {
    for (let i = 0; i < 3; i++) await request(app.getHttpServer()).get(SETTINGS).set('x-host-user', '7').expect(200);
    const refused = await request(app.getHttpServer()).get(SETTINGS).set('x-host-user', '7').expect(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    for (let i = 0; i < 20; i++) await request(app.getHttpServer()).get('/host/ping').set('x-host-user', '7').expect(200);
  });
});
