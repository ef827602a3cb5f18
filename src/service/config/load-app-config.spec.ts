import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestCertificate } from '../../testing/test-certificate';
import { WebhookUrlPolicy } from '../../notifications/url-policy/webhook-url-policy';
import { loadAppConfig, parseEncryptionKeys } from './load-app-config';
import { webhookTrustSummary } from './webhook-trust';

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('loadAppConfig', () => {
  const dataDir = () => mkdtempSync(join(tmpdir(), 'nw-config-'));

  it('runs on defaults: SQLite under ./data and generated development secrets kept across starts', () => {
    const dir = dataDir();
    const env = { DB_PATH: join(dir, 'db.sqlite') };
    const first = loadAppConfig(env);
    expect(first).toMatchObject({ port: 3000, nodeEnv: 'development', database: { type: 'sqlite', path: env.DB_PATH } });
    expect(first.notifications.encryptionKeys[0].key).toHaveLength(32);
    expect(first.notifications.rateLimits).toEqual({
      settings: { limit: 120, ttlMs: 60_000 },
      testSend: { limit: 5, ttlMs: 60_000 },
      redeliver: { limit: 10, ttlMs: 60_000 },
    });
    expect(readFileSync(join(dir, 'jwt-secret.dev'), 'utf8')).toBe(first.notifications.jwtSecret);
    expect(loadAppConfig(env)).toEqual(first);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DB_TYPE: 'postgres' }, 'DB_TYPE'],
    [{ DB_TYPE: 'mysql' }, 'DATABASE_URL is required'],
    [{ DATABASE_URL: 'postgres://x' }, 'DATABASE_URL'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ SECRETS_ENCRYPTION_KEY: 'not-a-key' }, 'SECRETS_ENCRYPTION_KEY'],
    [{ SERVICE_SITE: 'not a url' }, 'SERVICE_SITE'],
    [{ DELIVERY_CONCURRENCY: '0' }, 'DELIVERY_CONCURRENCY'],
    [{ DELIVERY_BATCH_SIZE: 'many' }, 'DELIVERY_BATCH_SIZE'],
    [{ DELIVERY_PER_ENDPOINT_CONCURRENCY: '0' }, 'DELIVERY_PER_ENDPOINT_CONCURRENCY'],
    [{ DELIVERY_CIRCUIT_FAILURES: '-1' }, 'DELIVERY_CIRCUIT_FAILURES'],
    [{ DELIVERY_CIRCUIT_COOL_DOWN_MS: '10' }, 'DELIVERY_CIRCUIT_COOL_DOWN_MS'],
    [{ DELIVERY_TIMEOUT_MS: '50' }, 'DELIVERY_TIMEOUT_MS'],
    [{ DB_CONNECT_TIMEOUT_MS: '10' }, 'DB_CONNECT_TIMEOUT_MS must be an integer from 100 to 60000'],
    [{ DB_QUERY_TIMEOUT_MS: '-1' }, 'DB_QUERY_TIMEOUT_MS'],
    [{ DB_POOL_SIZE: '0' }, 'DB_POOL_SIZE'],
    [{ DB_POOL_QUEUE_LIMIT: 'lots' }, 'DB_POOL_QUEUE_LIMIT'],
    [{ PUBLISH_TIMEOUT_MS: '70000' }, 'PUBLISH_TIMEOUT_MS must be an integer from 100 to 60000'],
    [
      { DELIVERY_LEASE_MS: '4000' },
      'DELIVERY_LEASE_MS (4000) must exceed DELIVERY_TIMEOUT_MS (5000) by more than 7000 ms (record budget and tolerated clock skew)',
    ],
    [
      { DELIVERY_TIMEOUT_MS: '60000' },
      'DELIVERY_LEASE_MS (60000) must exceed DELIVERY_TIMEOUT_MS (60000) by more than 7000 ms (record budget and tolerated clock skew)',
    ],
    [{ NODE_ENV: 'production', SECRETS_ENCRYPTION_KEY: KEY }, 'JWT_SECRET is required when NODE_ENV=production'],
    [
      { NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(32), JWT_AUDIENCE: 'settings' },
      'JWT_ISSUER is required when NODE_ENV=production (the iss claim user tokens must carry)',
    ],
    [
      { NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(32), JWT_ISSUER: 'https://funding.example.com' },
      'JWT_AUDIENCE is required when NODE_ENV=production (the aud claim user tokens must carry)',
    ],
    [{ NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(32) }, 'SECRETS_ENCRYPTION_KEY is required when NODE_ENV=production'],
    [
      { NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(32), SECRETS_ENCRYPTION_KEY: KEY },
      'METRICS_TOKEN is required when NODE_ENV=production (or set METRICS_OPEN_IN_PRODUCTION=i-understand-metrics-are-open if /metrics is unreachable from outside)',
    ],
    [
      { NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(32), SECRETS_ENCRYPTION_KEY: KEY, METRICS_OPEN_IN_PRODUCTION: 'yes' },
      'METRICS_OPEN_IN_PRODUCTION must be unset or exactly "i-understand-metrics-are-open"',
    ],
  ])('refuses %j naming %s', (env, variable) => {
    expect(() => loadAppConfig({ DB_PATH: join(dataDir(), 'db.sqlite'), ...env })).toThrow(variable);
  });

  it('reads the event catalog of EVENT_SCHEMAS_DIR, and refuses a folder it cannot read, a file named after no event type or one that is not JSON', () => {
    const examples = join(__dirname, '..', '..', '..', 'examples', 'event-catalog');
    const config = loadAppConfig({ DB_PATH: join(dataDir(), 'db.sqlite'), EVENT_SCHEMAS_DIR: examples });
    expect(Object.keys(config.notifications.eventSchemas ?? {})).toHaveLength(29);
    expect(config.notifications.eventSchemas?.LOAN_EXECUTED?.version).toBe(1);
    const missing = join(dataDir(), 'nowhere');
    expect(() => loadAppConfig({ DB_PATH: join(dataDir(), 'db.sqlite'), EVENT_SCHEMAS_DIR: missing })).toThrow(
      `EVENT_SCHEMAS_DIR: Event schemas folder ${missing} cannot be read (ENOENT)`,
    );
    const misnamed = dataDir();
    writeFileSync(join(misnamed, 'loan_executed.json'), JSON.stringify({ version: 1, schema: { type: 'object' } }));
    expect(() => loadAppConfig({ DB_PATH: join(misnamed, 'db.sqlite'), EVENT_SCHEMAS_DIR: misnamed })).toThrow(
      `EVENT_SCHEMAS_DIR: ${join(misnamed, 'loan_executed.json')}: Event schema of loan_executed: not an event type`,
    );
    const broken = dataDir();
    writeFileSync(join(broken, 'RATE_SPIKE.json'), '{ "version": 1, ');
    expect(() => loadAppConfig({ DB_PATH: join(broken, 'db.sqlite'), EVENT_SCHEMAS_DIR: broken })).toThrow(
      `EVENT_SCHEMAS_DIR: ${join(broken, 'RATE_SPIKE.json')}: not JSON`,
    );
  });

  it('reads a production configuration', () => {
    const config = loadAppConfig({
      NODE_ENV: 'production',
      PORT: '8080',
      DB_TYPE: 'mysql',
      DATABASE_URL: 'mysql://app:pw@db:3306/notifications',
      JWT_SECRET: 'j'.repeat(32),
      JWT_ISSUER: 'https://funding.example.com',
      JWT_AUDIENCE: 'notification-settings',
      SECRETS_ENCRYPTION_KEY: `k2:${KEY},k1:${Buffer.alloc(32, 1).toString('base64')}`,
      JWT_MAX_LIFETIME_SECONDS: '3600',
      SERVICE_SITE: 'https://lend.example.org',
      METRICS_TOKEN: 'm'.repeat(32),
    });
    expect(config.port).toBe(8080);
    expect(config.notifications.serviceSite).toBe('https://lend.example.org');
    expect(config.notifications.maxTokenLifetimeSeconds).toBe(3600);
    expect(config.notifications).toMatchObject({
      jwtIssuer: 'https://funding.example.com',
      jwtAudience: 'notification-settings',
      production: true,
    });
    expect(config.apiDocs).toBe(false); // Swagger UI is off in production unless API_DOCS=true
    expect(config.database).toEqual({ type: 'mysql', url: 'mysql://app:pw@db:3306/notifications', tuning: {} });
    expect(config.notifications.encryptionKeys.map((k) => k.id)).toEqual(['k2', 'k1']);
  });

  it('serves the API docs outside production, and in production only with API_DOCS=true', () => {
    const dev = { DB_PATH: join(dataDir(), 'db.sqlite') };
    expect(loadAppConfig(dev).apiDocs).toBe(true);
    expect(loadAppConfig({ ...dev, API_DOCS: 'false' }).apiDocs).toBe(false);
    expect(() => loadAppConfig({ ...dev, API_DOCS: 'yes' })).toThrow('API_DOCS must be true or false');
  });

  it('reads the database timeouts, pool limits and publish deadline', () => {
    const config = loadAppConfig({
      DB_TYPE: 'mysql',
      DB_PATH: join(dataDir(), 'db.sqlite'),
      DATABASE_URL: 'mysql://app:pw@db:3306/notifications',
      DB_CONNECT_TIMEOUT_MS: '2000',
      DB_QUERY_TIMEOUT_MS: '0',
      DB_POOL_SIZE: '20',
      DB_POOL_QUEUE_LIMIT: '50',
      PUBLISH_TIMEOUT_MS: '3000',
    });
    expect(config.database).toEqual({
      type: 'mysql',
      url: 'mysql://app:pw@db:3306/notifications',
      tuning: { connectTimeoutMs: 2000, queryTimeoutMs: 0, poolSize: 20, poolQueueLimit: 50 },
    });
    expect(config.notifications.publishTimeoutMs).toBe(3000);
  });

  it('reads the delivery tuning, leaving what is unset to the module defaults', () => {
    const dir = dataDir();
    const env = {
      DB_PATH: join(dir, 'db.sqlite'),
      DELIVERY_CONCURRENCY: '128',
      DELIVERY_PER_ENDPOINT_CONCURRENCY: '8',
      DELIVERY_CIRCUIT_FAILURES: '0',
      DELIVERY_LEASE_MS: '10000',
      DELIVERY_TIMEOUT_MS: '2000',
    };
    expect(loadAppConfig(env).notifications.delivery).toEqual({
      concurrency: 128,
      perEndpointConcurrency: 8,
      circuitBreaker: { failuresToOpen: 0, coolDownMs: undefined },
      batchSize: undefined,
      leaseMs: 10_000,
      timeoutMs: 2000,
    });
  });

  it('reads the DNS servers and save deadline of webhook host names, the system resolver and 2 s by default', () => {
    const env = { DB_PATH: join(dataDir(), 'db.sqlite') };
    expect(loadAppConfig(env).notifications.hostResolution).toEqual({ servers: [], saveTimeoutMs: undefined });
    const config = loadAppConfig({
      ...env,
      WEBHOOK_DNS_SERVERS: '10.0.0.2, 127.0.0.1:5353 [2001:db8::1]:53',
      WEBHOOK_DNS_SAVE_TIMEOUT_MS: '1500',
    });
    expect(config.notifications.hostResolution).toEqual({
      servers: ['10.0.0.2', '127.0.0.1:5353', '[2001:db8::1]:53'],
      saveTimeoutMs: 1500,
    });
  });

  it('starts in production without METRICS_TOKEN only when METRICS_OPEN_IN_PRODUCTION opts out', () => {
    const production = {
      NODE_ENV: 'production',
      JWT_SECRET: 'j'.repeat(32),
      JWT_ISSUER: 'https://funding.example.com',
      JWT_AUDIENCE: 'notification-settings',
      SECRETS_ENCRYPTION_KEY: KEY,
      DB_PATH: join(dataDir(), 'db.sqlite'),
    };
    expect(loadAppConfig({ ...production, METRICS_OPEN_IN_PRODUCTION: 'i-understand-metrics-are-open' }).metricsToken).toBeUndefined();
    expect(loadAppConfig({ ...production, METRICS_TOKEN: 'm'.repeat(32) }).metricsToken).toBe('m'.repeat(32));
    expect(loadAppConfig({ ...production, METRICS_TOKEN: 'm'.repeat(32), API_DOCS: 'true' }).apiDocs).toBe(true);
  });

  it('reads PROCESS_ROLE, all by default', () => {
    expect(loadAppConfig({ DB_PATH: join(dataDir(), 'db.sqlite') }).notifications.role).toBe('all');
    expect(loadAppConfig({ DB_PATH: join(dataDir(), 'db.sqlite'), PROCESS_ROLE: 'worker' }).notifications.role).toBe('worker');
  });

  describe('bad values: one line per variable, naming it', () => {
    const problemsOf = (env: Record<string, string>): string[] => {
      try {
        loadAppConfig({ DB_PATH: join(dataDir(), 'db.sqlite'), ...env });
      } catch (error) {
        const [header, ...lines] = (error as Error).message.split('\n');
        expect(header).toBe('Invalid configuration:');
        return lines.map((line) => line.replace(/^ {2}- /, ''));
      }
      throw new Error('accepted');
    };

    it.each([
      ['PORT', 'abc', 'PORT must be an integer from 1 to 65535'],
      ['PORT', '0', 'PORT must be an integer from 1 to 65535'],
      ['RETENTION_FAILED_DAYS', 'x', 'RETENTION_FAILED_DAYS must be a whole number of at least 1'],
      ['RETENTION_IDEMPOTENCY_KEY_HOURS', '0', 'RETENTION_IDEMPOTENCY_KEY_HOURS must be an integer from 1 to 8760'],
      ['WEBHOOK_AUTO_DISABLE_AFTER', '-2', 'WEBHOOK_AUTO_DISABLE_AFTER must be a whole number of at least 0'],
      ['WEBHOOK_ALLOWED_CIDRS', 'localhost', 'WEBHOOK_ALLOWED_CIDRS must list IP ranges, not host names: Invalid CIDR "localhost"'],
      ['WEBHOOK_ALLOWED_CIDRS', '127.0.0.0/8, 10/8', 'WEBHOOK_ALLOWED_CIDRS must list IP ranges, not host names: Invalid CIDR "10/8"'],
      ['WEBHOOK_EXTRA_CA_FILE', '/etc/hostname', 'WEBHOOK_EXTRA_CA_FILE (/etc/hostname) holds no PEM certificate'],
      ['WEBHOOK_EXTRA_CA_FILE', '/nonexistent/ca.pem', 'WEBHOOK_EXTRA_CA_FILE (/nonexistent/ca.pem) cannot be read: ENOENT'],
      ['WEBHOOK_DNS_SERVERS', '1.1.1.1, dns.example', 'WEBHOOK_DNS_SERVERS must list DNS server addresses'],
      ['WEBHOOK_DNS_SAVE_TIMEOUT_MS', '50', 'WEBHOOK_DNS_SAVE_TIMEOUT_MS must be an integer from 100 to 10000'],
      ['JWT_ALLOW_TOKENS_WITHOUT_EXPIRY', 'yes', 'JWT_ALLOW_TOKENS_WITHOUT_EXPIRY must be true or false'],
      ['PROCESS_ROLE', 'scheduler', 'PROCESS_ROLE must be one of api, worker, all'],
      ['INTERNAL_API_TOKEN', 'x'.repeat(31), 'INTERNAL_API_TOKEN'],
      ['METRICS_TOKEN', 'x'.repeat(31), 'METRICS_TOKEN'],
      [
        'WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION',
        'yes',
        'WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION must be unset or exactly "i-understand-the-ssrf-risk"',
      ],
    ])('%s=%s', (variable, value, message) => {
      const problems = problemsOf({ [variable]: value });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(message);
    });

    it('a PEM block that is not a certificate names the file', () => {
      const file = join(dataDir(), 'ca.pem');
      writeFileSync(file, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
      expect(problemsOf({ WEBHOOK_EXTRA_CA_FILE: file })).toEqual([
        expect.stringContaining(`WEBHOOK_EXTRA_CA_FILE (${file}) certificate 1 of 1 cannot be parsed`),
      ]);
    });

    it('lists every bad variable at once', () => {
      expect(problemsOf({ PORT: 'abc', WEBHOOK_ALLOWED_CIDRS: 'localhost', WEBHOOK_EXTRA_CA_FILE: '/etc/hostname' })).toEqual([
        expect.stringMatching(/^PORT /),
        expect.stringMatching(/^WEBHOOK_ALLOWED_CIDRS /),
        expect.stringMatching(/^WEBHOOK_EXTRA_CA_FILE /),
      ]);
    });
  });

  describe('webhook allow-list in production', () => {
    const production = {
      NODE_ENV: 'production',
      JWT_SECRET: 'j'.repeat(32),
      JWT_ISSUER: 'https://funding.example.com',
      JWT_AUDIENCE: 'notification-settings',
      SECRETS_ENCRYPTION_KEY: KEY,
      METRICS_TOKEN: 'm'.repeat(32),
    };

    it.each([
      ['0.0.0.0/0', 'an unspecified ("this network") address (0.0.0.0/8)'],
      ['127.0.0.0/8', 'a loopback address (127.0.0.0/8)'],
      ['169.254.169.254', 'a link-local address (169.254.0.0/16)'],
      ['8.8.8.8, 10.1.0.0/16', 'a private address (10.0.0.0/8)'],
      ['::/0', 'the unspecified address (::/128)'],
      ['fd00::/8', 'a unique-local address (fc00::/7)'],
      ['::ffff:192.168.1.1', 'a private address (192.168.0.0/16)'],
    ])('refuses %s (overlaps %s) without the override', (cidrs, overlap) => {
      expect(() => loadAppConfig({ ...production, WEBHOOK_ALLOWED_CIDRS: cidrs })).toThrow(
        new RegExp(`WEBHOOK_ALLOWED_CIDRS lets webhooks reach non-public addresses \\(.*overlaps ${overlap.replace(/[()."]/g, '\\$&')}`),
      );
      expect(() => loadAppConfig({ ...production, WEBHOOK_ALLOWED_CIDRS: cidrs })).toThrow(
        'WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION=i-understand-the-ssrf-risk',
      );
    });

    it('accepts them with WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION=i-understand-the-ssrf-risk, and outside production', () => {
      const override = { WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION: 'i-understand-the-ssrf-risk', WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8' };
      expect(loadAppConfig({ ...production, ...override }).notifications.allowedCidrs).toEqual(['10.0.0.0/8']);
      expect(
        loadAppConfig({ DB_PATH: join(dataDir(), 'db.sqlite'), WEBHOOK_ALLOWED_CIDRS: '0.0.0.0/0' }).notifications.allowedCidrs,
      ).toEqual(['0.0.0.0/0']);
    });

    it('accepts an allow-list of public ranges only (it changes nothing)', () => {
      expect(loadAppConfig({ ...production, WEBHOOK_ALLOWED_CIDRS: '8.8.8.0/24 2606:4700::/32' }).notifications.allowedCidrs).toEqual([
        '8.8.8.0/24',
        '2606:4700::/32',
      ]);
    });

    it('so the metadata address stays refused in production', () => {
      const config = loadAppConfig(production);
      const policy = new WebhookUrlPolicy({ allowedCidrs: config.notifications.allowedCidrs });
      expect(() => policy.checkSyntax('https://169.254.169.254/latest/meta-data')).toThrow('link-local');
    });
  });

  it('summarises the allow-list and the extra CAs for the start-up log, one line each', async () => {
    const file = join(dataDir(), 'ca.pem');
    writeFileSync(file, (await generateTestCertificate()).certPem);
    const config = loadAppConfig({
      DB_PATH: join(dataDir(), 'db.sqlite'),
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_EXTRA_CA_FILE: file,
    });
    const summary = webhookTrustSummary(config.notifications.allowedCidrs, config.webhookExtraCa, { production: false });
    expect(summary.allowList).toBe('Webhook allow-list: 127.0.0.0/8 (webhook URLs may reach these addresses although not public)');
    expect(summary.extraCas).toMatch(
      new RegExp(`^Extra CAs for webhook receivers: 1 from ${file}: "CN=receiver.test" \\(SHA-256 [0-9A-F:]{95}, valid to `),
    );
    expect(summary.extraCas).not.toContain('PRIVATE KEY');
    expect(webhookTrustSummary([], undefined, { production: true })).toEqual({
      allowList: 'Webhook allow-list: none (webhook URLs must reach public addresses only)',
      extraCas: "Extra CAs for webhook receivers: none (Node's default roots)",
      warn: false,
    });
  });

  it('refuses user tokens without exp unless JWT_ALLOW_TOKENS_WITHOUT_EXPIRY=true', () => {
    const env = { DB_PATH: join(dataDir(), 'db.sqlite') };
    expect(loadAppConfig(env).notifications.allowTokensWithoutExpiry).toBe(false);
    expect(loadAppConfig({ ...env, JWT_ALLOW_TOKENS_WITHOUT_EXPIRY: 'true' }).notifications.allowTokensWithoutExpiry).toBe(true);
  });

  it('names a key that does not decode to 32 bytes', () => {
    expect(() => parseEncryptionKeys(`short:${Buffer.alloc(31).toString('base64')}A`)).toThrow('"short" must decode to 32 bytes');
  });
});
