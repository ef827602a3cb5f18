import { createPublicKey, verify } from 'node:crypto';
import { Writable } from 'node:stream';
import type { EventType } from '@funding/notification-webhooks';
import type { ReceivedRequest } from '@funding/notification-webhooks/testing';
import { Webhook } from 'standardwebhooks';
import { LogLevel } from '../../src/service/config/environment-variables';
import { SecretsService } from '../../src/notifications/secrets/secrets.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { SETTINGS } from '../support/settings-api';

const ROTATE_KEY = `${SETTINGS}/webhook/rotate-signing-key`;
const MINUTE = 60_000;
const PUBLIC_KEY = /^whpk_[A-Za-z0-9+/]{43}=$/;

/** Every JSON log line of this file's apps (nestjs-pino keeps one root logger per process: the first app's). */
class LogCapture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}
const logs = new LogCapture();

/**
 * A receiver's check written from the Standard Webhooks spec with nothing but node:crypto and the public key as the
 * settings API shows it: `whpk_` + base64 of the raw 32-byte key, `v1a,<base64 signature>` over `id.timestamp.body`.
 */
function verifiesWithPublicKeyOnly(whpk: string, request: ReceivedRequest): boolean {
  const raw = Buffer.from(whpk.slice('whpk_'.length), 'base64');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  const signed = Buffer.concat([Buffer.from(`${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.`), request.rawBody]);
  return String(request.headers['webhook-signature'])
    .split(' ')
    .filter((entry) => entry.startsWith('v1a,'))
    .some((entry) => verify(null, signed, key, Buffer.from(entry.slice(4), 'base64')));
}

const versions = (request: ReceivedRequest) =>
  String(request.headers['webhook-signature'])
    .split(' ')
    .map((entry) => entry.split(',')[0]);

describeEachDatabase('Ed25519 (v1a) signatures on $name', (kind) => {
  const t = appWithKitPerSuite(kind, {}, { config: { logLevel: LogLevel.trace }, logDestination: logs });
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
  });

  const put = (body: object, id = userId) => t.http().put(SETTINGS).set('Authorization', t.bearer(id)).send(body);
  const enable = (signatureSchemes?: string[], type: `${EventType}` = 'RATE_SPIKE') =>
    put({ type, channel: 'WEBHOOK', enabled: true, webhookUrl: t.receiver.url(`/u${userId}`), signatureSchemes });
  const effectiveRow = async (type = 'RATE_SPIKE') => {
    const effective = await t.http().get(`${SETTINGS}/effective`).set('Authorization', t.bearer(userId)).expect(200);
    return effective.body.find((row: { type: string; channel: string }) => row.type === type && row.channel === 'WEBHOOK');
  };
  const publish = (type = 'RATE_SPIKE') =>
    t.publish({ userId, type, severity: 'INFO', title: 'Rate spike', body: 'USD FRR up', payload: { rate: 0.0003 } }).expect(202);
  const rotateKey = (body: object) => t.http().post(ROTATE_KEY).set('Authorization', t.bearer(userId)).send(body);
  const secretVerifies = (secret: string, request: ReceivedRequest) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(t.clock.now());
    try {
      new Webhook(secret).verify(request.rawBody, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    } finally {
      vi.useRealTimers();
    }
  };
  /** The private key's 32-byte seed, as the service opens it for signing, in the spellings a leak would take. */
  const privateKeySpellings = async () => {
    const [{ id }] = await t.dataSource.query(`SELECT id FROM notification_preferences WHERE user_id = ${userId} AND type = 'RATE_SPIKE'`);
    const [key] = await t.app.get(SecretsService).signingKeysFor(Number(id));
    const seed = key.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
    return [seed.toString('base64'), seed.toString('base64url'), seed.toString('hex')];
  };

  it('a receiver verifies a delivered request with only the public key the settings API shows; no HMAC is sent', async () => {
    const enabled = await enable(['ed25519']).expect(200);
    expect(enabled.body).toMatchObject({ signatureSchemes: ['ed25519'], signingPublicKey: expect.stringMatching(PUBLIC_KEY) });
    const publicKey: string = (await effectiveRow()).signingPublicKey;
    expect(publicKey).toBe(enabled.body.signingPublicKey);

    await publish();
    const [request] = await t.waitForDelivery({ userId });
    expect(request.headers['x-service-signature']).toBeUndefined();
    expect(versions(request)).toEqual(['v1a']);
    expect(request.headers['webhook-id']).toBe(request.eventId);
    expect(verifiesWithPublicKeyOnly(publicKey, request)).toBe(true);
    expect(request.isSignedWithPublicKey(publicKey, { toleranceSeconds: 300, now: t.clock.now() })).toBe(true);
    // The signature covers the id and the exact bytes.
    const tampered = Object.assign(Object.create(Object.getPrototypeOf(request)), request, { rawBody: Buffer.from(`${request.rawBody} `) });
    expect(verifiesWithPublicKeyOnly(publicKey, tampered)).toBe(false);
    const otherId = Object.assign(Object.create(Object.getPrototypeOf(request)), request, {
      headers: { ...request.headers, 'webhook-id': 'another' },
    });
    expect(verifiesWithPublicKeyOnly(publicKey, otherId)).toBe(false);
    expect(secretVerifies(enabled.body.webhookSecret, request)).toBe(false);
  });

  it('with both schemes, X-Service-Signature stays as the spec says and webhook-signature carries v1 and v1a', async () => {
    const enabled = await enable(['ed25519', 'hmac']).expect(200);
    expect(enabled.body.signatureSchemes).toEqual(['hmac', 'ed25519']);
    const secret: string = enabled.body.webhookSecret;
    await publish();
    const [request] = await t.waitForDelivery({ userId });
    expect(request.isSignedWith(secret, { toleranceSeconds: 300, now: t.clock.now() })).toBe(true);
    expect(versions(request)).toEqual(['v1', 'v1a']);
    expect(secretVerifies(secret, request)).toBe(true);
    expect(verifiesWithPublicKeyOnly(enabled.body.signingPublicKey, request)).toBe(true);
  });

  it('keeps HMAC only by default, with no key pair; switching a webhook to ed25519 signs its pending retry with v1a', async () => {
    const enabled = await enable().expect(200);
    expect(enabled.body.signatureSchemes).toEqual(['hmac']);
    expect(enabled.body).not.toHaveProperty('signingPublicKey');
    t.receiver.respondWith({ status: 503 });
    await publish();
    const [first] = await t.waitForDelivery({ userId });
    expect(versions(first)).toEqual(['v1']);
    expect(first.isSignedWith(enabled.body.webhookSecret)).toBe(true);

    const switched = await put({
      type: 'RATE_SPIKE',
      channel: 'WEBHOOK',
      enabled: true,
      webhookUrl: t.receiver.url(`/u${userId}`),
      signatureSchemes: ['ed25519'],
    }).expect(200);
    expect(switched.body.signingPublicKey).toMatch(PUBLIC_KEY);
    t.receiver.respondWith({ status: 204 });
    t.advance(MINUTE);
    await t.runScheduler();
    const [, retry] = await t.waitForDelivery({ userId, count: 2 });
    expect(retry.attempt).toBe(2);
    expect(versions(retry)).toEqual(['v1a']);
    expect(retry.headers['x-service-signature']).toBeUndefined();
    expect(verifiesWithPublicKeyOnly(switched.body.signingPublicKey, retry)).toBe(true);

    // Back to HMAC keeps the key pair (and its public key) for a later switch.
    const back = await put({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: false, signatureSchemes: ['hmac'] }).expect(200);
    expect(back.body).toMatchObject({ enabled: false, signatureSchemes: ['hmac'], signingPublicKey: switched.body.signingPublicKey });
  });

  it('rotating with an overlap sends a v1a of each key until it ends, and shows the previous public key until then', async () => {
    const oldKey: string = (await enable(['ed25519']).expect(200)).body.signingPublicKey;
    const rotated = await rotateKey({ type: 'RATE_SPIKE', overlapHours: 24 }).expect(200);
    const newKey: string = rotated.body.signingPublicKey;
    expect(newKey).toMatch(PUBLIC_KEY);
    expect(newKey).not.toBe(oldKey);
    expect(rotated.body).toMatchObject({
      previousSigningPublicKey: oldKey,
      previousSigningPublicKeyValidUntil: new Date(t.clock.now() + 24 * 60 * MINUTE).toISOString(),
    });
    expect(rotated.body).not.toHaveProperty('webhookSecret');

    await publish();
    const [during] = await t.waitForDelivery({ userId });
    expect(versions(during)).toEqual(['v1a', 'v1a']);
    expect(verifiesWithPublicKeyOnly(newKey, during)).toBe(true);
    expect(verifiesWithPublicKeyOnly(oldKey, during)).toBe(true);

    t.advance(24 * 60 * MINUTE);
    expect(await effectiveRow()).not.toHaveProperty('previousSigningPublicKey');
    await publish();
    const [, after] = await t.waitForDelivery({ userId, count: 2 });
    expect(versions(after)).toEqual(['v1a']);
    expect(verifiesWithPublicKeyOnly(newKey, after)).toBe(true);
    expect(verifiesWithPublicKeyOnly(oldKey, after)).toBe(false);

    const again = await rotateKey({ type: 'RATE_SPIKE' }).expect(200);
    expect(again.body).not.toHaveProperty('previousSigningPublicKey');
    await rotateKey({ type: 'RATE_DROP' }).expect(404);
  });

  it('never answers, lists, logs or stores in clear the private key', async () => {
    const enabled = await enable(['hmac', 'ed25519']).expect(200);
    await rotateKey({ type: 'RATE_SPIKE', overlapHours: 1 }).expect(200);
    const current = await privateKeySpellings();
    await publish();
    await t.waitForDelivery({ userId });
    const list = await t.http().get(SETTINGS).set('Authorization', t.bearer(userId)).expect(200);
    const effective = await t.http().get(`${SETTINGS}/effective`).set('Authorization', t.bearer(userId)).expect(200);
    const stored = JSON.stringify(await t.dataSource.query('SELECT * FROM webhook_signing_keys'));
    for (const text of [enabled.text, list.text, effective.text, stored, logs.text])
      for (const spelling of current) expect(text).not.toContain(spelling);
    expect(logs.text.length).toBeGreaterThan(0);
    for (const row of [...list.body, ...effective.body]) {
      expect(Object.keys(row)).not.toContain('signingPrivateKey');
      expect(Object.keys(row)).not.toContain('webhookSecret');
    }
  });

  it.each([
    [[], 'must name at least one signature scheme'],
    [['rsa'], 'each item must be one of hmac, ed25519'],
    [['hmac', 'hmac'], 'must not repeat a signature scheme'],
    ['ed25519', 'must be an array of signature schemes'],
  ])('answers 400 naming signatureSchemes for %j', async (signatureSchemes, message) => {
    const response = await enable(signatureSchemes as string[]).expect(400);
    expect(response.body.errors).toContainEqual({ field: 'signatureSchemes', message });
  });

  it('refuses signatureSchemes on a channel other than WEBHOOK', async () => {
    const response = await put({ type: 'RATE_SPIKE', channel: 'IN_APP', enabled: true, signatureSchemes: ['ed25519'] }).expect(400);
    expect(response.body.errors).toEqual([{ field: 'signatureSchemes', message: 'is only accepted with channel WEBHOOK' }]);
  });
});
