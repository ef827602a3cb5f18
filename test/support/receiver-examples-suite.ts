import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { Agent, request } from 'undici';
import { signStandardWebhook, signStandardWebhookEd25519 } from '../../src/notifications/delivery/wire/standard-webhooks-signature';
import { SecretsService } from '../../src/notifications/secrets/secrets.service';
import { signWebhook } from '../../src/notifications/delivery/wire/webhook-signature';
import { buildSignatureVectors, SIGNATURE_VECTORS_FILE } from '../../src/service/scripts/signature-vectors';
import { generateTestCertificate } from '../../src/testing/test-certificate';
import { DataSource } from 'typeorm';
import { EventType, Severity } from '@funding/notification-webhooks';
import { bootTestNotifications, TestClock, type TestNotifications } from '@funding/notification-webhooks/testing';
import { type ExampleProcess, startExampleProcess } from './example-process';
import { freePort } from './free-port';
import { SETTINGS } from './settings-api';

/** A receiver example in examples/receivers: the command that runs it (from the repository's root) and its webhook path. */
export interface ReceiverExample {
  readonly name: string;
  readonly command: readonly string[];
  readonly path: string;
}

const TS_NODE = [process.execPath, '-r', 'ts-node/register/transpile-only'];
/** The examples that need nothing but Node (`npm test` runs them). */
export const NODE_EXAMPLES: readonly ReceiverExample[] = [
  { name: 'Express', command: [...TS_NODE, 'examples/receivers/express/server.ts'], path: '/webhooks/funding' },
  { name: 'Fastify', command: [...TS_NODE, 'examples/receivers/fastify/server.ts'], path: '/webhooks/funding' },
  { name: 'NestJS', command: [...TS_NODE, 'examples/receivers/nestjs/main.ts'], path: '/webhooks/funding' },
  { name: 'Next.js route handler', command: [...TS_NODE, 'examples/receivers/nextjs/serve.ts'], path: '/api/webhooks' },
];
/** The examples that need another toolchain (`npm run test:examples` runs them). */
export const TOOLCHAIN_EXAMPLES: readonly ReceiverExample[] = [
  { name: 'Python', command: ['python3', 'examples/receivers/python/receiver.py'], path: '/webhooks/funding' },
  { name: 'Go', command: ['go', 'run', 'examples/receivers/go/receiver.go'], path: '/webhooks/funding' },
];
const VECTOR_COUNT = buildSignatureVectors().vectors.length;
const SW_VECTOR_COUNT = buildSignatureVectors().standardWebhooks.vectors.length;
const ED_VECTOR_COUNT = buildSignatureVectors().standardWebhooksEd25519.vectors.length;
// WEBHOOK_SCHEME: which signature an example checks (x-service is its default); ed25519 runs with the public key only.
const SCHEMES = ['x-service', 'standard-webhooks', 'ed25519'] as const;
type Scheme = (typeof SCHEMES)[number];
const START_TIMEOUT_MS = 120_000; // the first `go run` compiles
// Bodies that verify but are not a JSON object: each must get 400, not 500 or a dropped connection.
const NOT_OBJECTS = ['', '[]', '"x"', 'null', '{"type":'];
// An address of this machine other than loopback, if it has one: an example bound to 127.0.0.1 refuses it.
const NON_LOOPBACK_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;

/** What signs a hand-made request: the webhook's secret, or for `ed25519` its private key. */
type Signer = string | KeyObject;

/** The event id, timestamp and signature headers of `scheme`, signed as the service signs them. */
function signedHeaders(scheme: Scheme, signer: Signer, eventId: string, timestamp: number, body: string): Record<string, string> {
  if (scheme === 'x-service')
    return {
      'x-service-event-id': eventId,
      'x-service-timestamp': String(timestamp),
      'x-service-signature': signWebhook(signer as string, timestamp, body),
    };
  const signature =
    scheme === 'ed25519'
      ? signStandardWebhookEd25519([signer as KeyObject], eventId, timestamp, body)
      : signStandardWebhook([signer as string], eventId, timestamp, body);
  return { 'webhook-id': eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

/** Another signer of the same kind: a request it signs must be refused. */
const otherSigner = (scheme: Scheme): Signer =>
  scheme === 'ed25519' ? generateKeyPairSync('ed25519').privateKey : `whsec_${randomBytes(32).toString('base64')}`;

/** Undefined when a TCP connection to host:port opens, else the error code (ECONNREFUSED when nothing listens there). */
function connectError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5_000 });
    socket.once('connect', () => (socket.destroy(), resolve(undefined)));
    socket.once('timeout', () => (socket.destroy(), resolve('timeout')));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** Each example runs as a real process (HTTPS on loopback) and receives real deliveries from the testing kit. */
export function describeReceiverExamples(examples: readonly ReceiverExample[]): void {
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
          examples.map(async (example) => {
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
        expect(answers).toEqual(examples.map((example) => [example.name, '400 bad signature', '200 processed']));
      },
      START_TIMEOUT_MS,
    );

    describe.each(examples.map((example, index) => ({ ...example, index })))('$name', (example) => {
      // One process per scheme, each with its own user (and so its own webhook and secret).
      const running = {} as Record<Scheme, { receiver: ExampleProcess; port: number; url: string; secret: Signer; userId: number }>;
      const http = () => supertest(kit.app.getHttpServer());
      const privateKeyOf = async (userId: number): Promise<KeyObject> => {
        const [{ id }] = await kit.app.get(DataSource).query(`SELECT id FROM notification_preferences WHERE user_id = ${userId}`);
        const [key] = await kit.app.get(SecretsService).signingKeysFor(Number(id));
        return key;
      };
      const outcomes = (scheme: Scheme, eventId: string) => running[scheme].receiver.jsonLines().filter((line) => line.eventId === eventId);
      /** A hand-signed request to the receiver of `scheme`: `status text`, or how it failed without an answer. */
      const send = async (scheme: Scheme, body: string, headers: Record<string, string>) => {
        try {
          const response = await request(running[scheme].url, {
            dispatcher: agent,
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json', ...headers },
          });
          return `${response.statusCode} ${(await response.body.text()).trim()}`;
        } catch (error) {
          return `no answer: ${(error as { code?: string }).code ?? String(error)}`;
        }
      };

      beforeAll(async () => {
        await Promise.all(
          SCHEMES.map(async (scheme, schemeIndex) => {
            const userId = example.index + 1 + schemeIndex * examples.length;
            const port = await freePort();
            const url = `https://127.0.0.1:${port}${example.path}`;
            const signatureSchemes = scheme === 'ed25519' ? ['ed25519'] : ['hmac'];
            const enabled = await http()
              .put(SETTINGS)
              .set('Authorization', kit.bearer(userId))
              .send({ type: 'LOAN_EXECUTED', channel: 'WEBHOOK', enabled: true, webhookUrl: url, signatureSchemes })
              .expect(200);
            // The ed25519 receiver gets the public key the settings API shows and no secret; the test signs its own
            // requests with the webhook's private key, read from the service.
            const secret: Signer = scheme === 'ed25519' ? await privateKeyOf(userId) : (enabled.body.webhookSecret as string);
            const keys: Record<string, string> =
              scheme === 'ed25519' ? { WEBHOOK_PUBLIC_KEY: enabled.body.signingPublicKey } : { WEBHOOK_SECRET: secret as string };
            const [command, ...args] = example.command;
            const receiver = startExampleProcess(command, args, {
              ...keys,
              WEBHOOK_SCHEME: scheme,
              PORT: String(port),
              TLS_CERT_FILE: join(tlsDir, 'cert.pem'),
              TLS_KEY_FILE: join(tlsDir, 'key.pem'),
            });
            running[scheme] = { receiver, port, url, secret, userId };
            await receiver.waitForLine((line) => line.startsWith('listening on https://'), START_TIMEOUT_MS);
          }),
        );
        kit.clock.advance(Date.now() - kit.clock.now());
      }, START_TIMEOUT_MS + 10_000);
      afterAll(() => Promise.all(SCHEMES.map((scheme) => running[scheme]?.receiver.stop())));

      it.each(SCHEMES)(
        '%s: verifies and processes each delivered event exactly once, and answers a redelivery 2xx as a duplicate',
        async (scheme) => {
          const { receiver, userId } = running[scheme];
          const auth = () => kit.bearer(userId);
          const events = [1500, 2500].map((amount) => ({
            userId,
            type: EventType.LOAN_EXECUTED,
            severity: Severity.INFO,
            title: 'Loan executed',
            body: `A USD loan of ${amount} was executed — 0,02 % pro Tag 📈`,
            payload: { currency: 'USD', amount },
          }));
          const { eventIds } = await kit.publisher.publishMany(events);
          for (const eventId of eventIds) await receiver.waitForLine((line) => line.includes(eventId));
          for (const eventId of eventIds) {
            expect(outcomes(scheme, eventId)).toEqual([{ outcome: 'processed', eventId, type: 'LOAN_EXECUTED', userId }]);
          }
          await kit.settle();

          const { body: log } = await http().get(`${SETTINGS}/webhook-deliveries`).set('Authorization', auth()).expect(200);
          expect(log.data).toHaveLength(2);
          for (const delivery of log.data) expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });

          const original = log.data.find((delivery: { eventId: string }) => delivery.eventId === eventIds[0]);
          const { body: redelivery } = await http()
            .post(`${SETTINGS}/webhook-deliveries/${original.id}/redeliver`)
            .set('Authorization', auth())
            .set('Content-Type', 'application/json')
            .expect(202);
          await receiver.waitForLine((line) => line.includes('"duplicate"') && line.includes(eventIds[0]));
          await kit.settle();
          const { body: detail } = await http()
            .get(`${SETTINGS}/webhook-deliveries/${redelivery.id}`)
            .set('Authorization', auth())
            .expect(200);
          expect(detail).toMatchObject({
            eventId: eventIds[0],
            status: 'DELIVERED',
            attempts: [{ statusCode: 200, responseExcerpt: 'duplicate' }],
          });
          expect(outcomes(scheme, eventIds[0]).map((line) => line.outcome)).toEqual(['processed', 'duplicate']);
          expect(outcomes(scheme, eventIds[1]).map((line) => line.outcome)).toEqual(['processed']);
        },
      );

      it.each(SCHEMES)(
        '%s: answers 400 to a wrong signature and to a correctly signed but stale timestamp, and processes neither, then processes a correct one',
        async (scheme) => {
          const { secret, userId } = running[scheme];
          const body = JSON.stringify({ type: 'LOAN_EXECUTED', userId });
          const now = Math.floor(Date.now() / 1000);
          expect(await send(scheme, body, signedHeaders(scheme, otherSigner(scheme), 'forged-1', now, body))).toBe('400 bad signature');
          expect(await send(scheme, body, signedHeaders(scheme, secret, 'replayed-1', now - 301, body))).toBe('400 bad signature');
          expect(await send(scheme, body, signedHeaders(scheme, secret, 'hand-signed-1', now, body))).toBe('200 processed');
          expect(outcomes(scheme, 'forged-1')).toEqual([{ outcome: 'rejected', eventId: 'forged-1' }]);
          expect(outcomes(scheme, 'replayed-1')).toEqual([{ outcome: 'rejected', eventId: 'replayed-1' }]);
          if (scheme !== 'x-service') {
            // Its signature covers the id: a captured request replayed under another webhook-id fails.
            const replayed = { ...signedHeaders(scheme, secret, 'hand-signed-1', now, body), 'webhook-id': 'replayed-2' };
            expect(await send(scheme, body, replayed)).toBe('400 bad signature');
          }
        },
      );

      it.each(SCHEMES)(
        '%s: answers 400 to a correctly signed body that is not a JSON object (never 500, never a reset), and keeps serving',
        async (scheme) => {
          const { secret, userId } = running[scheme];
          const now = Math.floor(Date.now() / 1000);
          const answers: string[] = [];
          for (const [index, body] of NOT_OBJECTS.entries()) {
            answers.push(
              `${JSON.stringify(body)} → ${await send(scheme, body, signedHeaders(scheme, secret, `not-object-${index}`, now, body))}`,
            );
          }
          expect(answers).toEqual(NOT_OBJECTS.map((body) => `${JSON.stringify(body)} → 400 body is not a JSON object`));
          expect(outcomes(scheme, 'not-object-0')).toEqual([{ outcome: 'malformed', eventId: 'not-object-0' }]);
          const body = JSON.stringify({ type: 'LOAN_EXECUTED', userId });
          expect(await send(scheme, body, signedHeaders(scheme, secret, 'after-not-objects', now, body))).toBe('200 processed');
        },
      );

      it('listens on 127.0.0.1 only, the address it printed', async () => {
        for (const scheme of SCHEMES) {
          const { receiver, port } = running[scheme];
          expect(await receiver.waitForLine((line) => line.startsWith('listening on '))).toBe(`listening on https://127.0.0.1:${port}`);
          expect(await connectError('127.0.0.1', port)).toBeUndefined();
          // Without another address on this machine, the printed line and the loopback connection are what is checked.
          if (NON_LOOPBACK_ADDRESS) expect(await connectError(NON_LOOPBACK_ADDRESS, port)).toBe('ECONNREFUSED');
        }
      });

      it(
        `passes every conformance vector of ${SIGNATURE_VECTORS_FILE}, of every scheme`,
        async () => {
          const [command, ...args] = example.command;
          const run = startExampleProcess(command, [...args, '--vectors', SIGNATURE_VECTORS_FILE]);
          const code = await run.exited;
          expect(run.output()).toContain(`${VECTOR_COUNT}/${VECTOR_COUNT} x-service vectors passed`);
          expect(run.output()).toContain(`${SW_VECTOR_COUNT}/${SW_VECTOR_COUNT} standard-webhooks vectors passed`);
          expect(run.output()).toContain(`${ED_VECTOR_COUNT}/${ED_VECTOR_COUNT} ed25519 vectors passed`);
          expect(code).toBe(0);
        },
        START_TIMEOUT_MS,
      );
    });
  });
}
