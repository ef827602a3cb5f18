import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestCertificate } from '../../src/testing/test-certificate';
import { startServiceProcess } from '../support/service-process';

const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_SECRET: 'startup-test-jwt-secret-0123456789abcdef',
  JWT_ISSUER: 'https://funding.example.com',
  JWT_AUDIENCE: 'notification-settings',
  SECRETS_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
  METRICS_TOKEN: 'startup-test-metrics-token-0123456789abcdef',
};

describe('service start-up', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nw-startup-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits with one line per bad variable, naming it', () => {
    const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/service/main.ts'], {
      cwd: join(__dirname, '..', '..'),
      env: {
        PATH: process.env.PATH,
        ...PRODUCTION,
        DB_PATH: ':memory:',
        PORT: 'not-a-port',
        WEBHOOK_ALLOWED_CIDRS: '0.0.0.0/0',
        WEBHOOK_EXTRA_CA_FILE: '/etc/hostname',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'Invalid configuration:',
      '  - PORT must be an integer from 1 to 65535',
      expect.stringMatching(
        /^ {2}- WEBHOOK_ALLOWED_CIDRS lets webhooks reach non-public addresses .* WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION=/,
      ),
      '  - WEBHOOK_EXTRA_CA_FILE (/etc/hostname) holds no PEM certificate (-----BEGIN CERTIFICATE-----)',
    ]);
  });

  it('refuses to start in production without METRICS_TOKEN, in one line saying how to opt out', () => {
    const { METRICS_TOKEN: _token, ...withoutToken } = PRODUCTION;
    const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/service/main.ts'], {
      cwd: join(__dirname, '..', '..'),
      env: { PATH: process.env.PATH, ...withoutToken, DB_PATH: ':memory:' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'Invalid configuration:',
      '  - METRICS_TOKEN is required when NODE_ENV=production (or set METRICS_OPEN_IN_PRODUCTION=i-understand-metrics-are-open if /metrics is unreachable from outside)',
    ]);
  });

  it('refuses an event schema file it cannot use, in one line naming the file and the problem', () => {
    const schemas = mkdtempSync(join(dir, 'event-schemas-'));
    writeFileSync(join(schemas, 'RATE_SPIKE.json'), JSON.stringify({ version: 1, schema: { type: 'object' } }));
    const loop = {
      $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } },
      type: 'object',
      properties: { x: { $ref: '#/$defs/a' } },
    };
    writeFileSync(join(schemas, 'LOAN_EXECUTED.json'), JSON.stringify({ version: 1, schema: loop }));
    const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/service/main.ts'], {
      cwd: join(__dirname, '..', '..'),
      env: { PATH: process.env.PATH, ...PRODUCTION, DB_PATH: ':memory:', EVENT_SCHEMAS_DIR: schemas },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'Invalid configuration:',
      `  - EVENT_SCHEMAS_DIR: ${join(schemas, 'LOAN_EXECUTED.json')}: Event schema of LOAN_EXECUTED: $ref loop that reads no input: #/$defs/a -> #/$defs/b -> #/$defs/a`,
    ]);
  });

  it('logs which allow-list and which extra CAs are in force, one line each, without secrets', async () => {
    const caFile = join(dir, 'ca.pem');
    const certificate = await generateTestCertificate();
    writeFileSync(caFile, certificate.certPem + certificate.keyPem); // a careless operator's file: the key must not be logged
    const service = await startServiceProcess({
      ...PRODUCTION,
      DB_PATH: join(dir, 'notifications.sqlite'),
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION: 'i-understand-the-ssrf-risk',
      WEBHOOK_EXTRA_CA_FILE: caFile,
    });
    try {
      const lines = service
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; context?: string; msg: string });
      const config = lines.filter((line) => line.context === 'Config');
      expect(config).toEqual([
        expect.objectContaining({
          level: 40,
          msg: 'Webhook allow-list: 127.0.0.0/8 (webhook URLs may reach these addresses although not public; allowed in production by WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION)',
        }),
        expect.objectContaining({
          level: 30,
          msg: expect.stringMatching(new RegExp(`^Extra CAs for webhook receivers: 1 from ${caFile}: "CN=receiver.test" \\(SHA-256 `)),
        }),
      ]);
      expect(service.output()).not.toContain('PRIVATE KEY');
      expect(service.output()).not.toContain(PRODUCTION.JWT_SECRET);
    } finally {
      service.child.kill('SIGKILL');
      await service.exited;
    }
  });
});
