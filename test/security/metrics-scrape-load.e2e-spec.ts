import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { LogLevel } from '../../src/service/config/environment-variables';
import { METRICS_TOKEN_FAILURES_PER_MINUTE } from '../../src/service/metrics-endpoint/metrics-token.guard';
import { QUEUE_DEPTH_CAP, QUEUE_DEPTH_INTERVAL_MS } from '../../src/notifications/metrics/notifications-metrics.service';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import { parsePrometheusText } from '../support/prometheus-text';
import { startTestAppWithKit, type TestAppWithKit } from '../support/test-app-with-kit';
import { describeEachDatabase } from '../support/each-database';

// Issue 36, section 2: no scrape rate makes the database count the queue more than once per interval, and wrong
// metrics tokens are throttled and logged as wrong internal tokens are.
const METRICS_TOKEN = 'metrics-token-for-load-0123456789abcdef';
const SCRAPERS = 50;
const USERS = 10;
const MINUTE = 60_000;
/**
 * The backlog the scrapes count over, 100,000 due deliveries: the gauge's cap, so each count reads as many rows as a
 * scrape can make it read, and the publishes' retries take the queue past it.
 */
const QUEUED = QUEUE_DEPTH_CAP;
/** The backlog's users, none with a webhook: nothing in the test attempts their deliveries (only runScheduler would). */
const BACKLOG_USERS = 1000;
const SEED_ROWS_PER_STATEMENT = 5000; // 3 parameters a row, within SQLite's 32,766; about 0.5 MB, within max_allowed_packet

// nestjs-pino keeps one root logger per process, made by the first app: every app of this file gets this one.
const logLines: string[] = [];
const logDestination = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logLines.push(chunk.toString('utf8'));
    done();
  },
});

describeEachDatabase('/metrics under load and guessing on $name', (kind) => {
  let t: TestAppWithKit;
  let base: string;
  /** Statements that counted the queue depth, as the database driver was given them. */
  let depthCounts = 0;

  beforeAll(async () => {
    t = await startTestAppWithKit(kind, {}, { config: { metricsToken: METRICS_TOKEN, logLevel: LogLevel.warn }, logDestination });
    const server = await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Every statement TypeORM sends goes through its logger's logQuery first, whatever the logging options.
    const logger = t.dataSource.logger;
    const logQuery = logger.logQuery.bind(logger);
    logger.logQuery = (query, parameters, runner) => {
      if (query.includes('leased_rows')) depthCounts++; // the queue-depth statement (DeliveryOutboxRepository.queueDepth)
      logQuery(query, parameters, runner);
    };
    t.receiver.respondWith({ status: 500 }); // every delivery stays queued for its retry
    for (let userId = 1; userId <= USERS; userId++) await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}`);
    await seedDueBacklog();
  });
  afterAll(() => t.close());

  /**
   * {@link QUEUED} deliveries that failed their first attempt a minute ago and are due now, with their events, written
   * directly in multi-row INSERTs (as a backlog left by an outage would sit in the outbox), spread over
   * {@link BACKLOG_USERS} users and so over every partition. The event ids ascend (UUID-shaped, apart from the
   * publishes' random ones): appended to the primary key rather than scattered through it, the seed takes a third of the
   * time on SQLite and less on MariaDB.
   */
  const seedDueBacklog = async () => {
    const now = t.clock.now();
    const [failedAt, createdAt] = [now - MINUTE, now - 2 * MINUTE];
    for (let from = 0; from < QUEUED; from += SEED_ROWS_PER_STATEMENT) {
      const rows = Array.from({ length: Math.min(SEED_ROWS_PER_STATEMENT, QUEUED - from) }, (_, i) => ({
        eventId: `00000000-0000-4000-8000-${String(from + i).padStart(12, '0')}`,
        userId: USERS + 1 + ((from + i) % BACKLOG_USERS),
      }));
      await t.dataSource.query(
        `INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ${rows.map(() => `(?, ?, 'RATE_SPIKE', '{}', ${createdAt})`).join(', ')}`,
        rows.flatMap(({ eventId, userId }) => [eventId, userId]),
      );
      await t.dataSource.query(
        'INSERT INTO webhook_deliveries (event_id, user_id, user_partition, type, status, attempt_count, next_attempt_at, ' +
          'last_status_code, last_error, created_at, updated_at) VALUES ' +
          rows.map(() => `(?, ?, ?, 'RATE_SPIKE', 'PENDING', 1, ${now}, 500, 'HTTP 500', ${createdAt}, ${failedAt})`).join(', '),
        rows.flatMap(({ eventId, userId }) => [eventId, userId, partitionOf(userId)]),
      );
    }
  };
  /** Deliveries due now, counted without a cap. */
  const dueNow = async () => {
    const [row] = await t.dataSource.query<{ due: number | string }[]>(
      "SELECT COUNT(*) AS due FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until < ?)",
      [t.clock.now(), t.clock.now()],
    );
    return Number(row.due);
  };

  const scrape = (token = METRICS_TOKEN) => fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  const wave = async () => {
    const responses = await Promise.all(Array.from({ length: SCRAPERS }, () => scrape()));
    return Promise.all(
      responses.map(async (response) => ({ status: response.status, samples: parsePrometheusText(await response.text()) })),
    );
  };
  const publishBatches = (round: number) =>
    Promise.all(
      Array.from({ length: USERS }, (_, i) =>
        t
          .publish({
            events: Array.from({ length: 5 }, (_unused, n) => ({
              userId: i + 1,
              type: 'RATE_SPIKE',
              severity: 'INFO',
              title: `Spike ${round}.${n}`,
              body: 'USD',
            })),
          })
          .then((response) => response.status),
      ),
    );

  it('serves 50 parallel scrapes over 100,000 queued deliveries while publishing, counting the queue once per interval', async () => {
    const gauge = (samples: Map<string, number>[], state: string) =>
      new Set(samples.map((sample) => sample.get(`webhook_queue_depth{state="${state}"}`)));
    t.advance(QUEUE_DEPTH_INTERVAL_MS); // a fresh interval: the app's start-up counts nothing here
    const before = depthCounts;
    const [published, first] = await Promise.all([publishBatches(1), wave()]);
    expect(published).toEqual(Array(USERS).fill(202));
    expect(first.map(({ status }) => status)).toEqual(Array(SCRAPERS).fill(200));
    expect(depthCounts - before).toBe(1);
    // Every scrape of the wave answered the one count, which read the whole backlog (the publishes' deliveries are
    // leased while attempted, then wait a minute for their retry: none of them is due yet).
    const firstSamples = first.map(({ samples }) => samples);
    expect(gauge(firstSamples, 'in_flight').size).toBe(1);
    expect([...gauge(firstSamples, 'due')]).toEqual([QUEUED]);
    expect([...gauge(firstSamples, 'failed')]).toEqual([0]);

    t.advance(QUEUE_DEPTH_INTERVAL_MS - 1); // still within the interval: no new count, whatever the scrape rate
    const [again, publishedAgain] = await Promise.all([wave(), publishBatches(2)]);
    expect(publishedAgain).toEqual(Array(USERS).fill(202));
    expect(again.map(({ status }) => status)).toEqual(Array(SCRAPERS).fill(200));
    expect(depthCounts - before).toBe(1);

    await t.settle();
    t.advance(MINUTE); // the interval is over, and the failed first attempts are due for their retry
    const after = await wave();
    const afterSamples = after.map(({ samples }) => samples);
    expect(after.map(({ status }) => status)).toEqual(Array(SCRAPERS).fill(200));
    expect(depthCounts - before).toBe(2);
    // More are due than the cap: the gauge saturates at it, as documented, rather than reading on.
    expect(await dueNow()).toBe(QUEUED + 2 * USERS * 5);
    expect([...gauge(afterSamples, 'due')]).toEqual([QUEUE_DEPTH_CAP]);
  });

  it('answers wrong tokens 401 up to the limit, then 429 with Retry-After, logging each; the right token still scrapes', async () => {
    const logged = logLines.length;
    for (let i = 0; i < METRICS_TOKEN_FAILURES_PER_MINUTE; i++) {
      const refused = await scrape('not-the-metrics-token-0123456789abcdef');
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    }
    const limited = await scrape('not-the-metrics-token-0123456789abcdef');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await scrape()).status).toBe(200);

    const lines = logLines
      .slice(logged)
      .map(
        (line) =>
          JSON.parse(line) as {
            level: number;
            msg: string;
            req?: { url?: string; headers?: Record<string, string> };
            res?: { statusCode?: number };
          },
      )
      .filter((record) => record.msg === 'request completed' && record.req?.url === '/metrics');
    expect(lines.map((record) => [record.level, record.res?.statusCode])).toEqual([
      ...Array<[number, number]>(METRICS_TOKEN_FAILURES_PER_MINUTE).fill([40, 401]),
      [40, 429],
    ]);
    expect(lines.every((record) => record.req?.headers?.authorization === '[Redacted]')).toBe(true);

    t.advance(MINUTE); // the window is over: a wrong token is a plain 401 again
    expect((await scrape('not-the-metrics-token-0123456789abcdef')).status).toBe(401);
  });
});
