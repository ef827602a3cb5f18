import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { Agent, request } from 'undici';
import { signWebhook } from '../src/notifications/delivery/webhook-signature';
import { buildSignatureVectors, SIGNATURE_VECTORS_FILE } from '../src/scripts/signature-vectors';
import { generateTestCertificate } from '../src/testing/test-certificate';
import { EventType, Severity } from '@funding/notification-webhooks';
import { bootTestNotifications, TestClock, type TestNotifications } from '@funding/notification-webhooks/testing';
import { type ExampleProcess, freePort, startExampleProcess } from './support/example-process';
import { SETTINGS } from './support/settings-api';

// Each example in examples/receivers runs as a real process (HTTPS on loopback) and receives real deliveries.
const TS_NODE = [process.execPath, '-r', 'ts-node/register/transpile-only'];
const EXAMPLES = [
  { name: 'Express', command: [...TS_NODE, 'examples/receivers/express/server.ts'], path: '/webhooks/funding' },
  { name: 'Fastify', command: [...TS_NODE, 'examples/receivers/fastify/server.ts'], path: '/webhooks/funding' },
  { name: 'NestJS', command: [...TS_NODE, 'examples/receivers/nestjs/main.ts'], path: '/webhooks/funding' },
  { name: 'Next.js route handler', command: [...TS_NODE, 'examples/receivers/nextjs/serve.ts'], path: '/api/webhooks' },
  { name: 'Python', command: ['python3', 'examples/receivers/python/receiver.py'], path: '/webhooks/funding' },
  { name: 'Go', command: ['go', 'run', 'examples/receivers/go/receiver.go'], path: '/webhooks/funding' },
];
const VECTOR_COUNT = buildSignatureVectors().vectors.length;
const START_TIMEOUT_MS = 120_000; // the first `go run` compiles

describe('receiver examples against real deliveries', () => {
  let kit: TestNotifications;
  let tlsDir: string;
  let caPem: string;
  let agent: Agent;

  beforeAll(async () => {
    const certificate = await generateTestCertificate();
    caPem = certificate.certPem;
    tlsDir = mkdtempSync(join(tmpdir(), 'receiver-examples-'));
    writeFileSync(join(tlsDir, 'cert.pem'), certificate.certPem);
    writeFileSync(join(tlsDir, 'key.pem'), certificate.keyPem);
    // The examples check timestamps against the real clock: the kit's clock starts at the wall time.
    kit = await bootTestNotifications({ clock: new TestClock(Date.now()), module: { extraCaPem: caPem } });
    agent = new Agent({ connect: { ca: caPem } });
  });
  afterAll(async () => {
    await agent?.close();
    await kit?.close();
    rmSync(tlsDir, { recursive: true, force: true });
  });

  it(
    'each serves plain HTTP without a certificate (TLS terminated in front) and takes its tolerance from WEBHOOK_TOLERANCE_SECONDS',
    async () => {
      const secret = 'whsec_plain-http-example-secret';
      const body = JSON.stringify({ type: 'LOAN_EXECUTED', userId: 1 });
      const signedAt = Math.floor(Date.now() / 1000) - 1000; // stale at 300 s, fresh at 3600 s
      const headers = { 'x-service-event-id': 'plain-1', 'x-service-timestamp': String(signedAt) };
      const answers = await Promise.all(
        EXAMPLES.map(async (example) => {
          const port = await freePort();
          const [command, ...args] = example.command;
          const receiver = startExampleProcess(command, args, {
            WEBHOOK_SECRET: secret,
            PORT: String(port),
            WEBHOOK_TOLERANCE_SECONDS: '3600',
          });
          try {
            await receiver.waitForLine((line) => line.startsWith(`listening on http://127.0.0.1:${port}`), START_TIMEOUT_MS);
            const post = async (signature: string) => {
              const response = await request(`http://127.0.0.1:${port}${example.path}`, {
                method: 'POST',
                body,
                headers: { ...headers, 'content-type': 'application/json', 'x-service-signature': signature },
              });
              return `${response.statusCode} ${(await response.body.text()).trim()}`;
            };
            return [example.name, await post('v1=00'), await post(signWebhook(secret, signedAt, body))];
          } finally {
            await receiver.stop();
          }
        }),
      );
      expect(answers).toEqual(EXAMPLES.map((example) => [example.name, '400 bad signature', '200 processed']));
    },
    START_TIMEOUT_MS,
  );

  describe.each(EXAMPLES.map((example, index) => ({ ...example, userId: index + 1 })))('$name', (example) => {
    let receiver: ExampleProcess;
    let url: string;
    let secret: string;
    const http = () => supertest(kit.app.getHttpServer());
    const auth = () => kit.bearer(example.userId);
    const outcomes = (eventId: string) => receiver.jsonLines().filter((line) => line.eventId === eventId);

    beforeAll(async () => {
      const port = await freePort();
      url = `https://127.0.0.1:${port}${example.path}`;
      const enabled = await http()
        .put(SETTINGS)
        .set('Authorization', auth())
        .send({ type: 'LOAN_EXECUTED', channel: 'WEBHOOK', enabled: true, webhookUrl: url })
        .expect(200);
      secret = enabled.body.webhookSecret as string;
      const [command, ...args] = example.command;
      receiver = startExampleProcess(command, args, {
        WEBHOOK_SECRET: secret,
        PORT: String(port),
        TLS_CERT_FILE: join(tlsDir, 'cert.pem'),
        TLS_KEY_FILE: join(tlsDir, 'key.pem'),
      });
      await receiver.waitForLine((line) => line.startsWith('listening on https://'), START_TIMEOUT_MS);
      kit.clock.advance(Date.now() - kit.clock.now());
    }, START_TIMEOUT_MS + 10_000);
    afterAll(() => receiver?.stop());

    it('verifies and processes each delivered event exactly once, and answers a redelivery 2xx as a duplicate', async () => {
      const events = [1500, 2500].map((amount) => ({
        userId: example.userId,
        type: EventType.LOAN_EXECUTED,
        severity: Severity.INFO,
        title: 'Loan executed',
        body: `A USD loan of ${amount} was executed — 0,02 % pro Tag 📈`,
        payload: { currency: 'USD', amount },
      }));
      const { eventIds } = await kit.publisher.publishMany(events);
      for (const eventId of eventIds) await receiver.waitForLine((line) => line.includes(eventId));
      for (const eventId of eventIds) {
        expect(outcomes(eventId)).toEqual([{ outcome: 'processed', eventId, type: 'LOAN_EXECUTED', userId: example.userId }]);
      }
      await kit.settle();

      const { body: log } = await http().get(`${SETTINGS}/webhook-deliveries`).set('Authorization', auth()).expect(200);
      expect(log.data).toHaveLength(2);
      for (const delivery of log.data) expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });

      const original = log.data.find((delivery: { eventId: string }) => delivery.eventId === eventIds[0]);
      const { body: redelivery } = await http()
        .post(`${SETTINGS}/webhook-deliveries/${original.id}/redeliver`)
        .set('Authorization', auth())
        .expect(202);
      await receiver.waitForLine((line) => line.includes('"duplicate"') && line.includes(eventIds[0]));
      await kit.settle();
      const { body: detail } = await http().get(`${SETTINGS}/webhook-deliveries/${redelivery.id}`).set('Authorization', auth()).expect(200);
      expect(detail).toMatchObject({
        eventId: eventIds[0],
        status: 'DELIVERED',
        attempts: [{ statusCode: 200, responseExcerpt: 'duplicate' }],
      });
      expect(outcomes(eventIds[0]).map((line) => line.outcome)).toEqual(['processed', 'duplicate']);
      expect(outcomes(eventIds[1]).map((line) => line.outcome)).toEqual(['processed']);
    });

    it('answers 400 to a wrong signature and to a correctly signed but stale timestamp, and processes neither, then processes a correct one', async () => {
      const body = JSON.stringify({ type: 'LOAN_EXECUTED', userId: example.userId });
      const send = async (signingSecret: string, timestamp: number, eventId: string) => {
        const response = await request(url, {
          dispatcher: agent,
          method: 'POST',
          body,
          headers: {
            'content-type': 'application/json',
            'x-service-event-id': eventId,
            'x-service-timestamp': String(timestamp),
            'x-service-signature': signWebhook(signingSecret, timestamp, body),
          },
        });
        return { status: response.statusCode, text: await response.body.text() };
      };
      const now = Math.floor(Date.now() / 1000);
      expect((await send(`${secret}x`, now, 'forged-1')).status).toBe(400);
      expect((await send(secret, now - 301, 'replayed-1')).status).toBe(400);
      expect(await send(secret, now, 'hand-signed-1')).toEqual({ status: 200, text: 'processed' });
      expect(outcomes('forged-1')).toEqual([{ outcome: 'rejected', eventId: 'forged-1' }]);
      expect(outcomes('replayed-1')).toEqual([{ outcome: 'rejected', eventId: 'replayed-1' }]);
    });

    it(
      `passes every conformance vector of ${SIGNATURE_VECTORS_FILE}`,
      async () => {
        const [command, ...args] = example.command;
        const run = startExampleProcess(command, [...args, '--vectors', SIGNATURE_VECTORS_FILE]);
        const code = await run.exited;
        expect(run.output()).toContain(`${VECTOR_COUNT}/${VECTOR_COUNT} vectors passed`);
        expect(code).toBe(0);
      },
      START_TIMEOUT_MS,
    );
  });
});
