import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { jsonLogLines, runServiceUntilExit, startServiceProcess } from '../support/service-process';

const SERVER_URL = process.env.TEST_MYSQL_URL!;
const SERVICE_SOURCE = resolve(__dirname, '..', '..', 'src', 'service', 'main.ts');
const SERVER = `${new URL(SERVER_URL).hostname}:${new URL(SERVER_URL).port || '3306'}`;
const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_SECRET: 'first-run-test-jwt-secret-0123456789abcdef',
  JWT_ISSUER: 'https://funding.example.com',
  JWT_AUDIENCE: 'notification-settings',
  SECRETS_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
  METRICS_TOKEN: 'first-run-test-metrics-token-0123456789abcdef',
};

function databaseUrl(name: string, port?: number): string {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  if (port !== undefined) url.port = String(port);
  return url.toString();
}

async function databaseExists(name: string): Promise<boolean> {
  const connection = await createConnection({ uri: SERVER_URL });
  const [rows] = await connection.query('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name]);
  await connection.end();
  return (rows as unknown[]).length === 1;
}

async function dropDatabase(name: string): Promise<void> {
  const connection = await createConnection({ uri: SERVER_URL });
  await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await connection.end();
}

/** The start stopped (exit 1) with nothing on stderr and one fatal JSON line of context Database: `msg`. */
function expectOneFatalLine(run: { code: number | null; stdout: string; stderr: string }, msg: string): void {
  expect(run.code).toBe(1);
  expect(run.stderr).toBe('');
  expect(jsonLogLines(run.stdout)).toEqual([expect.objectContaining({ level: 60, context: 'Database', msg })]);
}

describe('first run on MySQL/MariaDB', () => {
  const name = `nw_first_run_${randomBytes(4).toString('hex')}`;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nw-first-run-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await dropDatabase(name);
  });

  it('a wrong port stops the start at once with one JSON line that says what to do', async () => {
    const run = await runServiceUntilExit({ ...PRODUCTION, DB_TYPE: 'mysql', DATABASE_URL: databaseUrl('test', 1) });

    // One line: no TypeORM retries (they took 38 s and 53 lines of ANSI-coloured stack traces before).
    expectOneFatalLine(
      run,
      `Cannot connect to MySQL/MariaDB at ${new URL(SERVER_URL).hostname}:1 (connection refused): start the server, or fix the host and port in DATABASE_URL`,
    );
  });

  it('reads its configuration from a .env file in the directory it starts in', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'nw-dotenv-'));
    try {
      writeFileSync(join(cwd, '.env'), `DB_TYPE=mysql\nDATABASE_URL=${databaseUrl('test', 1)}\n`);
      const fromSource = {
        cwd,
        command: process.execPath,
        args: ['-r', require.resolve('ts-node/register/transpile-only'), SERVICE_SOURCE],
      };
      const run = await runServiceUntilExit(PRODUCTION, fromSource);

      expect(run.code).toBe(1);
      expect(jsonLogLines(run.stdout)).toEqual([
        expect.objectContaining({
          context: 'Database',
          msg: expect.stringContaining(`${new URL(SERVER_URL).hostname}:1 (connection refused)`),
        }),
      ]);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('a user the server refuses stops the start at once with one JSON line that names the user and what to fix', async () => {
    const url = new URL(databaseUrl('test'));
    url.username = 'nobody_here';
    url.password = 'wrong-password';
    const run = await runServiceUntilExit({ ...PRODUCTION, DB_TYPE: 'mysql', DATABASE_URL: url.toString() });

    expectOneFatalLine(
      run,
      `MySQL/MariaDB at ${SERVER} refused user "nobody_here" (access denied): fix the user and password in DATABASE_URL`,
    );
    expect(run.stdout).not.toContain('wrong-password');
  });

  it('in production a missing database stops the start with one line naming it and how to create it, and is not created', async () => {
    const run = await runServiceUntilExit({ ...PRODUCTION, DB_TYPE: 'mysql', DATABASE_URL: databaseUrl(name) });

    expect(run.code).toBe(1);
    expect(jsonLogLines(run.stdout + run.stderr)).toEqual([
      expect.objectContaining({
        level: 60,
        context: 'Database',
        msg: `Database "${name}" does not exist on ${SERVER}: create it (CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4) or fix the name in DATABASE_URL; with NODE_ENV=production the service never creates it`,
      }),
    ]);
    expect(await databaseExists(name)).toBe(false);
  });

  it('in development a missing database is created, the migrations applied are logged, and every line is JSON', async () => {
    const service = await startServiceProcess({
      NODE_ENV: 'development',
      DB_TYPE: 'mysql',
      DATABASE_URL: databaseUrl(name),
      DB_PATH: join(dir, 'unused.sqlite'),
    });
    try {
      expect(await databaseExists(name)).toBe(true);
      const ready = await fetch(`${service.baseUrl}/health/ready`);
      expect(ready.status).toBe(200);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    const lines = jsonLogLines(service.output());
    expect(lines.filter((line) => line.context === 'Database' || line.context === 'Migrations').map((line) => line.msg)).toEqual([
      'Created the database named in DATABASE_URL (it did not exist; NODE_ENV=development)',
      'Applied migration CreatePreferencesAndSecrets1763800000000',
      'Applied migration CreateWebhookDeliveries1763900000000',
      'Applied migration AddAutoDisableAndRetentionIndexes1764000000000',
      'Applied migration AddDeliveryWaitingReason1764100000000',
      'Applied migration OnePendingDeliveryPerEvent1764200000000',
      'Applied migration CreateEndpointProbes1764300000000',
      'Applied migration CreateIdempotencyKeys1764400000000',
      'Applied migration AddRotationOverlap1764500000000',
      'Applied migration AddEventTraceContext1764600000000',
      'Applied migration CreateWebhookHealth1764700000000',
      'Applied migration CreateEndpointLimits1764800000000',
      'Applied migration AddEndpointProbeHolder1764900000000',
      'Applied migration PartitionOwnership1765000000000',
      'Applied migration AddInstanceAnsweredAt1765100000000',
      'Applied migration AddDeliveryLogFilterIndexes1765200000000',
      'Applied migration AddEd25519SigningKeys1765300000000',
      'Applied migration CreateEventSchemas1765400000000',
      'Applied migration CreateEndpointCircuits1765500000000',
      'Applied migration AddDeliverySequences1765600000000',
      'Applied migration AddInstanceWakeUrl1765700000000',
    ]);
    expect(lines.filter((line) => line.context === 'Config' && line.level === 40).map((line) => line.msg)).toEqual([
      expect.stringMatching(/^JWT_SECRET is not set: generated a development value in /),
      expect.stringMatching(/^SECRETS_ENCRYPTION_KEY is not set: generated a development value in /),
    ]);
  });

  it('a second start (same database, created above) applies nothing and says the schema is up to date', async () => {
    const service = await startServiceProcess({ ...PRODUCTION, DB_TYPE: 'mysql', DATABASE_URL: databaseUrl(name) });
    service.child.kill('SIGTERM');
    await service.exited;

    const migrations = jsonLogLines(service.output()).filter((line) => line.context === 'Migrations' || line.context === 'Database');
    expect(migrations.map((line) => line.msg)).toEqual(['Database schema is up to date: no pending migrations']);
  });
});
