import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { EventType } from '@funding/notification-webhooks';
import { DbType } from '../../src/service/config/environment-variables';
import type { EncryptionKey } from '../../src/notifications/notifications-options.interface';
import { SecretCipher } from '../../src/notifications/secrets/secret-cipher';
import { SecretsReencryption, UnconfiguredKeysError } from '../../src/notifications/secrets/secrets-reencryption.service';
import { associatedData, keyAssociatedData } from '../../src/notifications/secrets/secrets.service';
import { WebhookSigningKey } from '../../src/notifications/secrets/webhook-signing-key.entity';
import { WebhookSigningKeyRepository } from '../../src/notifications/secrets/webhook-signing-key.repository';
import { WebhookSigningSecret } from '../../src/notifications/secrets/webhook-signing-secret.entity';
import { WebhookSigningSecretRepository } from '../../src/notifications/secrets/webhook-signing-secret.repository';
import type { SealedSecret } from '../../src/notifications/secrets/secret-cipher';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { startTestAppOn, TEST_JWT_SECRET } from '../support/test-app';
import { persistentDatabase } from '../support/persistent-database';
import type { TestDatabase } from '../support/test-databases';
import { SETTINGS } from '../support/settings-api';

const key = (id: string): EncryptionKey => ({ id, key: randomBytes(32) });
const keySpec = (...keys: EncryptionKey[]) => keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');

interface SecretRow {
  id: number;
  preference_id: number;
  key_id: string;
  ciphertext: string;
}

describeEachDatabase('encryption key rotation on $name', (kind) => {
  const oldKey = key('old');
  const newKey = key('new');
  const t = appWithKitPerSuite(kind, { encryptionKeys: [newKey, oldKey] });
  let user = 0;

  const rows = (): Promise<SecretRow[]> =>
    t.dataSource.query('SELECT id, preference_id, key_id, ciphertext FROM webhook_signing_secrets ORDER BY id');
  const rowOf = async (preferenceId: number) => (await rows()).find((row) => Number(row.preference_id) === preferenceId)!;
  const preferenceIdOf = async (userId: number, type: string) =>
    Number(
      (
        await t.dataSource.query('SELECT id FROM notification_preferences WHERE user_id = ? AND type = ? AND channel = ?', [
          userId,
          type,
          'WEBHOOK',
        ])
      )[0].id,
    );
  const writeSealed = (preferenceId: number, sealed: SealedSecret) =>
    t.dataSource.query('UPDATE webhook_signing_secrets SET key_id = ?, ciphertext = ? WHERE preference_id = ?', [
      sealed.keyId,
      sealed.ciphertext,
      preferenceId,
    ]);

  /** A webhook whose secret row was written before the key rotation: sealed with `sealWith`. */
  const legacyWebhook = async (type: `${EventType}` = 'RATE_SPIKE', sealWith = oldKey) => {
    const userId = ++user;
    const secret = await t.enableWebhook(userId, type, `/u${userId}`);
    const preferenceId = await preferenceIdOf(userId, type);
    expect((await rowOf(preferenceId)).key_id).toBe('new');
    await writeSealed(preferenceId, new SecretCipher([sealWith]).seal(secret, associatedData(preferenceId)));
    return { userId, type, secret, preferenceId };
  };
  const testSendVerifies = async ({ userId, type, secret }: { userId: number; type: string; secret: string }) => {
    t.receiver.clear();
    await t.http().post(`${SETTINGS}/webhook/test`).set('Authorization', t.bearer(userId)).send({ type }).expect(200);
    const [request] = t.receiver.requests;
    return request.isSignedWith(secret, { toleranceSeconds: 300, now: t.clock.now() });
  };
  const reencryption = () => t.app.get(SecretsReencryption);

  it('seals new secrets with the newest key and reads each row with the key id stored in it', async () => {
    const legacy = await legacyWebhook();
    expect((await rowOf(legacy.preferenceId)).key_id).toBe('old');
    expect(await testSendVerifies(legacy)).toBe(true);
  });

  it('re-encrypts every row with the newest key in batches, idempotently, and the secrets keep working', async () => {
    const legacy = [await legacyWebhook('RATE_SPIKE'), await legacyWebhook('RATE_DROP'), await legacyWebhook('LOAN_EXECUTED')];
    const before = await rows();
    const onOld = before.filter((row) => row.key_id === 'old').length;

    const report = await reencryption().run(2);
    expect(report).toEqual({ keyId: 'new', alreadyCurrent: before.length - onOld, reencrypted: onOld, changedMeanwhile: 0 });
    const after = await rows();
    expect(after.map((row) => row.key_id)).toEqual(after.map(() => 'new'));
    const onlyNewKey = new SecretCipher([newKey]);
    for (const { preferenceId, secret } of legacy) {
      expect(onlyNewKey.open({ keyId: 'new', ciphertext: (await rowOf(preferenceId)).ciphertext }, associatedData(preferenceId))).toBe(
        secret,
      );
    }
    expect(await testSendVerifies(legacy[1])).toBe(true);

    expect(await reencryption().run(2)).toEqual({ keyId: 'new', alreadyCurrent: after.length, reencrypted: 0, changedMeanwhile: 0 });
    expect(await rows()).toEqual(after);
  });

  it("re-seals a rotation's previous secret while its overlap runs, and drops one whose overlap ended", async () => {
    const rotateWithOverlap = (userId: number, type: string) =>
      t.http().post(`${SETTINGS}/webhook/rotate-secret`).set('Authorization', t.bearer(userId)).send({ type, overlapHours: 1 }).expect(200);
    const running = await legacyWebhook('RATE_SPIKE');
    const ended = await legacyWebhook('RATE_DROP');
    await rotateWithOverlap(ended.userId, ended.type);
    t.advance(60 * 60_000);
    await rotateWithOverlap(running.userId, running.type);
    const previousOf = async (preferenceId: number) =>
      (
        await t.dataSource.query<{ previous_key_id: string | null; previous_ciphertext: string | null }[]>(
          'SELECT previous_key_id, previous_ciphertext FROM webhook_signing_secrets WHERE preference_id = ?',
          [preferenceId],
        )
      )[0];
    expect(await previousOf(running.preferenceId)).toMatchObject({ previous_key_id: 'old' });

    await reencryption().run();
    const kept = await previousOf(running.preferenceId);
    expect(kept.previous_key_id).toBe('new');
    const onlyNewKey = new SecretCipher([newKey]);
    expect(onlyNewKey.open({ keyId: 'new', ciphertext: kept.previous_ciphertext! }, associatedData(running.preferenceId))).toBe(
      running.secret,
    );
    expect(await previousOf(ended.preferenceId)).toEqual({ previous_key_id: null, previous_ciphertext: null });
  });

  it("re-seals Ed25519 private keys too (and a rotation overlap's previous one), and deliveries still verify with the same public keys", async () => {
    const userId = ++user;
    const put = {
      type: 'IDLE_CASH',
      channel: 'WEBHOOK',
      enabled: true,
      webhookUrl: t.receiver.url(`/u${userId}`),
      signatureSchemes: ['ed25519'],
    };
    const oldPublicKey: string = (await t.http().put(SETTINGS).set('Authorization', t.bearer(userId)).send(put).expect(200)).body
      .signingPublicKey;
    const rotated = await t
      .http()
      .post(`${SETTINGS}/webhook/rotate-signing-key`)
      .set('Authorization', t.bearer(userId))
      .send({ type: 'IDLE_CASH', overlapHours: 1 })
      .expect(200);
    const preferenceId = await preferenceIdOf(userId, 'IDLE_CASH');
    const keyRow = async () =>
      (
        await t.dataSource.query<{ key_id: string; ciphertext: string; previous_key_id: string; previous_ciphertext: string }[]>(
          'SELECT key_id, ciphertext, previous_key_id, previous_ciphertext FROM webhook_signing_keys WHERE preference_id = ?',
          [preferenceId],
        )
      )[0];
    // As a row sealed before the key rotation would be: both private keys under the old key.
    const newCipher = new SecretCipher([newKey]);
    const oldCipher = new SecretCipher([oldKey]);
    const sealedBefore = await keyRow();
    const seeds = [sealedBefore.ciphertext, sealedBefore.previous_ciphertext].map((ciphertext) =>
      newCipher.open({ keyId: 'new', ciphertext }, keyAssociatedData(preferenceId)),
    );
    const [current, previous] = seeds.map((seed) => oldCipher.seal(seed, keyAssociatedData(preferenceId)));
    await t.dataSource.query(
      'UPDATE webhook_signing_keys SET key_id = ?, ciphertext = ?, previous_key_id = ?, previous_ciphertext = ? WHERE preference_id = ?',
      [current.keyId, current.ciphertext, previous.keyId, previous.ciphertext, preferenceId],
    );
    expect((await reencryption().secretsByKeyId()).get('old')).toBeGreaterThanOrEqual(1);

    await reencryption().run();
    const after = await keyRow();
    expect([after.key_id, after.previous_key_id]).toEqual(['new', 'new']);
    expect(
      [after.ciphertext, after.previous_ciphertext].map((ciphertext) =>
        newCipher.open({ keyId: 'new', ciphertext }, keyAssociatedData(preferenceId)),
      ),
    ).toEqual(seeds);
    t.receiver.clear();
    await t.http().post(`${SETTINGS}/webhook/test`).set('Authorization', t.bearer(userId)).send({ type: 'IDLE_CASH' }).expect(200);
    const [request] = t.receiver.requests;
    expect(request.isSignedWithPublicKey(rotated.body.signingPublicKey)).toBe(true);
    expect(request.isSignedWithPublicKey(oldPublicKey)).toBe(true);
  });

  it('leaves a secret rotated between its read and its write as the rotation set it', async () => {
    const legacy = await legacyWebhook('STALE_OFFER');
    let rotatedSecret = '';
    const racingRepository = new (class extends WebhookSigningSecretRepository {
      override async replaceIfUnchanged(read: WebhookSigningSecret, sealed: SealedSecret, previous: SealedSecret | null): Promise<boolean> {
        if (Number(read.preferenceId) === legacy.preferenceId) {
          const rotated = await t
            .http()
            .post(`${SETTINGS}/webhook/rotate-secret`)
            .set('Authorization', t.bearer(legacy.userId))
            .send({ type: legacy.type })
            .expect(200);
          rotatedSecret = rotated.body.webhookSecret;
        }
        return super.replaceIfUnchanged(read, sealed, previous);
      }
    })(t.dataSource.getRepository(WebhookSigningSecret));

    const keys = new WebhookSigningKeyRepository(t.dataSource.getRepository(WebhookSigningKey));
    const report = await new SecretsReencryption(racingRepository, keys, new SecretCipher([newKey, oldKey]), t.clock).run();
    expect(report.changedMeanwhile).toBe(1);
    expect(rotatedSecret).toMatch(/^whsec_/);
    expect(await testSendVerifies({ ...legacy, secret: rotatedSecret })).toBe(true);
    expect(await testSendVerifies(legacy)).toBe(false);
  });

  it('refuses to start when a row names a key id that is not configured, naming the key id and never the secret', async () => {
    const retired = await legacyWebhook('IDLE_CASH', key('retired'));
    const untouched = await legacyWebhook('FEE_TIER_CHANGED');
    try {
      const failure = await reencryption()
        .run()
        .then(
          () => new Error('run() succeeded'),
          (error: Error) => error,
        );
      expect(failure).toBeInstanceOf(UnconfiguredKeysError);
      expect(failure.message).toContain('"retired" (1 secret)');
      expect(failure.message).not.toContain(retired.secret.slice(6));
      expect((await rowOf(untouched.preferenceId)).key_id).toBe('old');
    } finally {
      await t.dataSource.query('DELETE FROM webhook_signing_secrets WHERE preference_id = ?', [retired.preferenceId]);
    }
  });
});

describeEachDatabase('npm run secrets:reencrypt on $name', (kind) => {
  const oldKey = key('old');
  const newKey = key('new');
  let database: TestDatabase;

  beforeAll(async () => {
    database = await persistentDatabase(kind);
  });
  afterAll(async () => {
    await database.drop();
  });

  const runCommand = async (...keys: EncryptionKey[]) => {
    const env = {
      ...process.env,
      NODE_ENV: 'test',
      JWT_SECRET: TEST_JWT_SECRET,
      SECRETS_ENCRYPTION_KEY: keySpec(...keys),
      ...(database.config.type === DbType.sqlite
        ? { DB_TYPE: 'sqlite', DB_PATH: database.config.path }
        : { DB_TYPE: database.config.type, DATABASE_URL: database.config.url }),
    };
    try {
      const { stdout, stderr } = await promisify(execFile)('npm', ['run', '-s', 'secrets:reencrypt', '--', '--batch-size=1'], { env });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
      return { code, stdout, stderr };
    }
  };

  it('re-encrypts the rows of a real database, reports counts, and names a missing key id', async () => {
    const app = await startTestAppOn(database, { encryptionKeys: [oldKey] });
    const secrets: string[] = [];
    for (const [userId, type] of [
      [1, 'RATE_SPIKE'],
      [2, 'RATE_DROP'],
    ] as const) {
      const response = await app
        .http()
        .put(SETTINGS)
        .set('Authorization', app.bearer(userId))
        .send({ type, channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://hooks.example.com/funding' })
        .expect(200);
      secrets.push(response.body.webhookSecret);
    }
    await app.app.close();

    const missingKey = await runCommand(newKey);
    expect(missingKey.code).toBe(1);
    expect(missingKey.stderr).toContain('"old" (2 secrets)');
    for (const secret of secrets) expect(missingKey.stderr + missingKey.stdout).not.toContain(secret.slice(6));

    const first = await runCommand(newKey, oldKey);
    expect(first.stdout).toContain('Re-encrypted 2 signing secret(s) with key "new"; 0 already used it; 0 rotated meanwhile');
    expect(first.stdout).toContain('Secrets by key id now: new=2.');

    const oldKeyRetired = await runCommand(newKey);
    expect(oldKeyRetired.code).toBe(0);
    expect(oldKeyRetired.stdout).toContain('Re-encrypted 0 signing secret(s) with key "new"; 2 already used it');
    for (const output of [first, oldKeyRetired])
      for (const secret of secrets) expect(output.stdout + output.stderr).not.toContain(secret.slice(6));
  }, 180_000);
});
