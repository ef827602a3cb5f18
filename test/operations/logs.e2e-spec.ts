import type { DestinationStream } from 'pino';
import { LogLevel } from '../../src/service/config/environment-variables';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { INTERNAL_API_TOKEN, INTERNAL_EVENTS_PATH } from '../support/test-app-with-kit';

/** The instances' wake route (partitions): called as often as they publish for one another's users. */
const WAKE_PATH = '/api/v1/internal/notifications/wake';
import { DELIVERIES, SETTINGS } from '../support/settings-api';

const METRICS_TOKEN = 'metrics-token-for-logs-0123456789abcdef';
const COOKIE_VALUE = 'session-cookie-value-0123456789';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface LogRecord {
  level: number;
  msg?: string;
  context?: string;
  reqId?: string;
  attemptNumber?: number;
  outcome?: string;
  req?: { id?: string; method?: string; url?: string; headers?: Record<string, string> };
  res?: { statusCode?: number };
}

/** The JSON lines pino writes, as a test destination. */
class LogCapture implements DestinationStream {
  private text = '';
  write(chunk: string): void {
    this.text += chunk;
  }
  raw(): string {
    return this.text;
  }
  records(): LogRecord[] {
    return this.text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogRecord);
  }
  clear(): void {
    this.text = '';
  }
}

// nestjs-pino keeps one root logger per process: every app of this file writes to this one capture.
const capture = new LogCapture();

describeEachDatabase('JSON logs on $name', (kind) => {
  beforeAll(() => capture.clear());
  const t = appWithKitPerSuite(kind, {}, { config: { logLevel: LogLevel.trace, metricsToken: METRICS_TOKEN }, logDestination: capture });

  it('logs a full flow (enable, deliver, fail, retry) as JSON by request id, with no secret, token or signature in it', async () => {
    const userId = 7;
    const bearer = t.bearer(userId);
    const publish = () => t.publish({ userId, type: 'RATE_SPIKE', severity: 'WARNING', title: 'Spike', body: 'USD' }).expect(202);

    const enabled = await t
      .http()
      .put(SETTINGS)
      .set('Authorization', bearer)
      .set('Cookie', `session=${COOKIE_VALUE}`)
      .set('X-Request-Id', 'trace-enable-1')
      .send({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: t.receiver.url('/hook') })
      .expect(200);
    const webhookSecret = enabled.body.webhookSecret as string;
    expect(webhookSecret).toBeTruthy();
    expect(enabled.headers['x-request-id']).toBe('trace-enable-1');

    await publish();
    await t.waitForDelivery({ userId });
    t.receiver.respondWith({ status: 500, body: 'down' });
    await publish();
    await t.waitForDelivery({ userId, count: 2 });
    t.advance(60_000);
    expect(await t.runScheduler()).toBe(1);
    await t.waitForDelivery({ userId, count: 3 });

    const signatures = t.receiver.requests.map((request) => String(request.headers['x-service-signature']));
    expect(signatures).toHaveLength(3);
    // A client that sends a signature header, a bad token and a malformed request id to the API.
    const refused = await t
      .http()
      .get(`${DELIVERIES}`)
      .set('Authorization', 'Bearer forged.jwt.value-0123456789')
      .set('X-Service-Signature', signatures[0])
      .set('X-Request-Id', 'not a sane id; drop table')
      .expect(401);
    expect(refused.headers['x-request-id']).toMatch(UUID);
    await t.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    await t.http().get('/health/ready').expect(200);
    await t.http().post(WAKE_PATH).set('Authorization', `Bearer ${INTERNAL_API_TOKEN}`).expect(204);

    const records = capture.records();
    const completed = records.filter((record) => record.msg === 'request completed');
    const enable = completed.find((record) => record.req?.method === 'PUT');
    expect(enable).toMatchObject({
      level: 30,
      reqId: 'trace-enable-1',
      req: { url: SETTINGS, headers: { authorization: '[Redacted]', cookie: '[Redacted]' } },
      res: { statusCode: 200 },
    });
    expect(completed.filter((record) => record.req?.method === 'POST' && record.req.url === INTERNAL_EVENTS_PATH)).toHaveLength(2);
    const unauthorized = completed.find((record) => record.res?.statusCode === 401);
    expect(unauthorized).toMatchObject({
      level: 40,
      reqId: refused.headers['x-request-id'],
      req: { headers: { 'x-service-signature': '[Redacted]' } },
    });
    expect(completed.filter((record) => /^\/(metrics|health)/.test(record.req?.url ?? '') || record.req?.url === WAKE_PATH)).toEqual([]);
    expect(records).toContainEqual(expect.objectContaining({ context: 'NestApplication', msg: 'Nest application successfully started' }));
    const attempts = records.filter((record) => record.context === 'WebhookDelivery' && record.outcome !== undefined);
    expect(attempts.map(({ level, msg, outcome, attemptNumber }) => ({ level, msg, outcome, attemptNumber }))).toEqual([
      { level: 20, msg: 'webhook delivered', outcome: 'success', attemptNumber: 1 },
      { level: 40, msg: 'webhook attempt failed; will retry', outcome: 'http_error', attemptNumber: 1 },
      { level: 40, msg: 'webhook attempt failed; will retry', outcome: 'http_error', attemptNumber: 2 },
    ]);

    const raw = capture.raw();
    const secrets = {
      webhookSecret,
      jwt: bearer.slice('Bearer '.length),
      internalToken: INTERNAL_API_TOKEN,
      metricsToken: METRICS_TOKEN,
      cookie: COOKIE_VALUE,
      forgedToken: 'forged.jwt.value-0123456789',
      ...Object.fromEntries(signatures.map((signature, i) => [`signature${i + 1}`, signature.replace(/^v1=/, '')])),
    };
    for (const [name, secret] of Object.entries(secrets)) {
      expect(secret.length, name).toBeGreaterThan(16);
      expect(raw.includes(secret), `${name} appears in the logs`).toBe(false);
    }
  });

  it.each(['X-Internal-Token', 'X-Api-Key', 'X-Service-Token', 'Internal-Token'])(
    'redacts the internal token sent in the wrong header (%s) of a publish',
    async (header) => {
      capture.clear();
      const requestId = `wrong-header-${header}`;
      await t.http().post(INTERNAL_EVENTS_PATH).set(header, INTERNAL_API_TOKEN).set('X-Request-Id', requestId).send({}).expect(401);
      const [completed] = capture.records().filter((record) => record.reqId === requestId && record.req);
      expect(completed.req?.headers).toMatchObject({ [header.toLowerCase()]: '[Redacted]' });
      expect(capture.raw()).not.toContain(INTERNAL_API_TOKEN);
    },
  );

  it('logs each health change of a webhook under WebhookHealth, once, with ids, states and counts but never its URL', async () => {
    const userId = 8;
    const path = `/hooks/token-in-the-path-${userId}`;
    await t.enableWebhook(userId, 'LOAN_EXECUTED', path);
    t.receiver.respondWith({ status: 503 });
    for (let i = 0; i < 4; i++) {
      await t.publish({ userId, type: 'LOAN_EXECUTED', severity: 'INFO', title: 'Loan', body: 'USD' }).expect(202);
      await t.waitForDelivery({ userId, count: i + 1 });
      await t.settle();
    }
    t.receiver.respondWith({ status: 204 });

    const health = capture.records().filter((record) => record.context === 'WebhookHealth');
    expect(health.map((record) => record.msg)).toEqual([
      `Webhook LOAN_EXECUTED of user ${userId}: became_failing (HEALTHY → FAILING); 3 failed attempts in a row, last status 503`,
    ]);
    expect(capture.raw()).not.toContain('token-in-the-path');
  });

  it('logs claims that fail while the database is away once, as a warning, and once when they work again', async () => {
    const engine = t.app.get(OutboxEngine);
    const claims = vi.spyOn(t.app.get(DeliveryOutboxRepository), 'claimDue').mockRejectedValue(new Error('connection lost'));
    const from = capture.records().length;
    for (let i = 0; i < 3; i++) {
      await expect(engine.drain()).rejects.toThrow('connection lost');
      t.advance(1_000);
    }
    claims.mockRestore();
    await engine.drain();

    const lines = capture
      .records()
      .slice(from)
      .filter((record) => record.context === 'WebhookDelivery' && record.level >= 30);
    expect(lines.map((record) => [record.level, record.msg])).toEqual([
      [40, 'Due deliveries could not be claimed (connection lost); trying again every 1 s until the database answers'],
      [30, 'Due deliveries are claimed again (claims failed for 3 s)'],
    ]);
  });

  it('redacts credentials a client puts in the wrong place: query parameters, X-Api-Key, cookies', async () => {
    const secrets = ['query-token-0123456789', 'query-access-token-0123456789', 'api-key-header-0123456789', 'cookie-0123456789'];
    capture.clear();
    await t
      .http()
      .get(`${SETTINGS}?token=${secrets[0]}&access_token=${secrets[1]}&type=RATE_SPIKE`)
      .set('X-Api-Key', secrets[2])
      .set('Cookie', `session=${secrets[3]}`)
      .set('X-Request-Id', 'wrong-place-1')
      .expect(401);
    const [completed] = capture.records().filter((record) => record.reqId === 'wrong-place-1' && record.req);
    expect(completed.req?.url).toBe(`${SETTINGS}?token=[Redacted]&access_token=[Redacted]&type=RATE_SPIKE`);
    expect(completed.req?.headers).toMatchObject({ 'x-api-key': '[Redacted]', cookie: '[Redacted]' });
    for (const secret of secrets) expect(capture.raw()).not.toContain(secret);
  });
});
