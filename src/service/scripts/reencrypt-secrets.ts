import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { loadAppConfig } from '../config/load-app-config';
import { databaseOptions } from '../database/database-options';
import { REENCRYPTION_BATCH_SIZE, SecretsReencryption } from '../../index';

// `npm run secrets:reencrypt [-- --batch-size=500]`: re-seals every signing secret with the first key of
// SECRETS_ENCRYPTION_KEY, so older keys can be removed. Safe to run while the service runs, and again.
async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const batchSize = batchSizeArgument(process.argv.slice(2));
  const config = loadAppConfig();
  const dataSource = new DataSource({ ...databaseOptions(config.database), migrationsRun: false });
  await dataSource.initialize();
  try {
    const reencryption = SecretsReencryption.overDataSource(dataSource, config.notifications.encryptionKeys);
    const report = await reencryption.run(batchSize);
    const byKey = [...(await reencryption.secretsByKeyId())].map(([keyId, count]) => `${keyId}=${count}`).join(', ') || 'none';
    console.log(
      `Re-encrypted ${report.reencrypted} signing secret(s) with key "${report.keyId}"; ${report.alreadyCurrent} already used it; ` +
        `${report.changedMeanwhile} rotated meanwhile (left as they were). Secrets by key id now: ${byKey}.`,
    );
  } finally {
    await dataSource.destroy();
  }
}

function batchSizeArgument(args: readonly string[]): number {
  const given = args.find((arg) => arg.startsWith('--batch-size='));
  if (!given) return REENCRYPTION_BATCH_SIZE;
  const value = Number(given.slice('--batch-size='.length));
  if (!Number.isInteger(value) || value < 1) throw new Error('--batch-size must be a whole number ≥ 1');
  return value;
}

main().catch((error: unknown) => {
  console.error(`secrets:reencrypt failed: ${(error as Error).message}`);
  process.exitCode = 1;
});
