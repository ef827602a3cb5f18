import { RECEIVER_HOSTNAME } from '@funding/notification-webhooks/testing';
import { DnsHostResolver } from '../../src/notifications/url-policy/host-resolver';
import { DELIVERIES, SETTINGS } from '../support/settings-api';
import { startTestAppWithKit, type TestAppWithKit } from '../support/test-app-with-kit';
import { describeEachDatabase } from '../support/each-database';
import { TestDnsServer } from '../support/test-dns-server';

// Webhook host names go through c-ares with a deadline, a cache and caps (issue 36, section 1), tested against a DNS
// server of the test's own on loopback: it answers `ok.test`, and never answers anything under `slow.test`.
const SAVE_TIMEOUT_MS = 2000;
/** What the machine may add to a deadline (2 shared cores, a database round trip): generous, but far below "no answer". */
const SLACK_MS = 2000;
const PER_USER = 2;
const ATTEMPT_TIMEOUT_MS = 1500;

async function timed<T>(run: () => PromiseLike<T>): Promise<{ result: T; ms: number }> {
  const start = performance.now();
  const result = await run();
  return { result, ms: performance.now() - start };
}

describe('DnsHostResolver against a DNS server on loopback', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await TestDnsServer.start({ blackHoledZones: ['slow.test'] });
    dns.set('hooks.ok.test', { a: ['192.0.2.10'], aaaa: ['2001:db8::10'], ttlSeconds: 60 });
    dns.set('v4only.ok.test', { a: ['192.0.2.11'], ttlSeconds: 60 });
    dns.set('slowly.ok.test', { a: ['192.0.2.12'], ttlSeconds: 60, delayMs: 200 });
    for (let i = 0; i < 3; i++) dns.set(`lru${i}.ok.test`, { a: [`192.0.2.${20 + i}`], ttlSeconds: 60 });
  });
  afterAll(() => dns.close());

  const aQueries = (name: string) => dns.questionsFor(name, 'A');

  it('answers A and AAAA, one family alone, and "not found" for an unknown name', async () => {
    const resolver = new DnsHostResolver({ servers: [dns.address] });
    await expect(resolver.resolve('hooks.ok.test', { deadlineMs: 1000 })).resolves.toEqual(['192.0.2.10', '2001:db8::10']);
    await expect(resolver.resolve('V4ONLY.ok.test.', { deadlineMs: 1000 })).resolves.toEqual(['192.0.2.11']);
    await expect(resolver.resolve('missing.ok.test', { deadlineMs: 1000 })).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('answers localhost and IP literals without asking the DNS (c-ares does not read /etc/hosts)', async () => {
    const before = dns.queries.length;
    const resolver = new DnsHostResolver({ servers: [dns.address] });
    await expect(resolver.resolve('localhost', { deadlineMs: 1000 })).resolves.toEqual(['127.0.0.1', '::1']);
    await expect(resolver.resolve('hooks.localhost', { deadlineMs: 1000 })).resolves.toEqual(['127.0.0.1', '::1']);
    await expect(resolver.resolve('127.0.0.1', { deadlineMs: 1000 })).resolves.toEqual(['127.0.0.1']);
    await expect(resolver.resolve('[::1]', { deadlineMs: 1000 })).resolves.toEqual(['::1']);
    expect(dns.queries.length).toBe(before);
  });

  it('gives up on a name that is never answered at the deadline, with ETIMEOUT', async () => {
    const resolver = new DnsHostResolver({ servers: [dns.address] });
    const { result, ms } = await timed(() => resolver.resolve('a.slow.test', { deadlineMs: 300 }).catch((error: unknown) => error));
    expect(result).toMatchObject({ code: 'ETIMEOUT' });
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(300 + SLACK_MS);
    expect(resolver.lookupsInFlight).toBe(0);
  });

  it('reuses an answer within its TTL and asks again after it', async () => {
    let now = 1_000_000;
    const resolver = new DnsHostResolver({ servers: [dns.address] }, () => now);
    const before = aQueries('hooks.ok.test');
    await resolver.resolve('hooks.ok.test', { deadlineMs: 1000 });
    now += 59_000;
    await expect(resolver.resolve('hooks.ok.test', { deadlineMs: 1000 })).resolves.toEqual(['192.0.2.10', '2001:db8::10']);
    expect(aQueries('hooks.ok.test')).toBe(before + 1);
    now += 2_000; // 61 s after the answer: its 60 s TTL is over
    await resolver.resolve('hooks.ok.test', { deadlineMs: 1000 });
    expect(aQueries('hooks.ok.test')).toBe(before + 2);
  });

  it('remembers that a name does not exist for notFoundTtlSeconds, then asks again', async () => {
    let now = 1_000_000;
    const resolver = new DnsHostResolver({ servers: [dns.address], notFoundTtlSeconds: 30 }, () => now);
    const before = aQueries('gone.ok.test');
    await expect(resolver.resolve('gone.ok.test', { deadlineMs: 1000 })).rejects.toMatchObject({ code: 'ENOTFOUND' });
    now += 29_000;
    await expect(resolver.resolve('GONE.ok.test', { deadlineMs: 1000 })).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(aQueries('gone.ok.test')).toBe(before + 1);
    now += 2_000;
    dns.set('gone.ok.test', { a: ['192.0.2.13'], ttlSeconds: 60 }); // created since: seen once the "not found" expired
    await expect(resolver.resolve('gone.ok.test', { deadlineMs: 1000 })).resolves.toEqual(['192.0.2.13']);
    expect(aQueries('gone.ok.test')).toBe(before + 2);
  });

  it('keeps at most cacheSize names, dropping the least recently used', async () => {
    const resolver = new DnsHostResolver({ servers: [dns.address], cacheSize: 2 });
    const before = [0, 1, 2].map((i) => aQueries(`lru${i}.ok.test`));
    for (const i of [0, 1, 0, 2, 0, 1]) await resolver.resolve(`lru${i}.ok.test`, { deadlineMs: 1000 });
    // lru0 stayed (used most recently each time); lru1 was dropped for lru2, so it was asked for again.
    expect([0, 1, 2].map((i) => aQueries(`lru${i}.ok.test`) - before[i])).toEqual([1, 2, 1]);
  });

  it('shares one query among the callers of a name in flight', async () => {
    const resolver = new DnsHostResolver({ servers: [dns.address] });
    const answers = await Promise.all(
      [1, 2, 3, undefined].map((userId) => resolver.resolve('slowly.ok.test', { deadlineMs: 1000, userId })),
    );
    expect(answers).toEqual(Array(4).fill(['192.0.2.12']));
    expect(aQueries('slowly.ok.test')).toBe(1);
  });

  it('caps lookups in flight per user (refused at once) and per process (waiting, within the deadline)', async () => {
    const resolver = new DnsHostResolver({ servers: [dns.address], maxInFlightPerUser: 2, maxInFlight: 3 });
    const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}.slow.test`);
    const byUser = await Promise.all(
      names('user', 5).map((name) => resolver.resolve(name, { deadlineMs: 300, userId: 7 }).catch((error: { code: string }) => error.code)),
    );
    expect(byUser.sort()).toEqual(['ELOOKUPBUSY', 'ELOOKUPBUSY', 'ELOOKUPBUSY', 'ETIMEOUT', 'ETIMEOUT']);
    expect(names('user', 5).filter((name) => dns.queriesFor(name).length > 0)).toHaveLength(2);

    const { result: byProcess, ms } = await timed(() =>
      Promise.all(
        names('process', 6).map((name) => resolver.resolve(name, { deadlineMs: 300 }).catch((error: { code: string }) => error.code)),
      ),
    );
    expect(byProcess).toEqual(Array(6).fill('ETIMEOUT'));
    expect(names('process', 6).filter((name) => dns.queriesFor(name).length > 0)).toHaveLength(3);
    expect(ms).toBeLessThan(300 + SLACK_MS);
    expect(resolver.lookupsInFlight).toBe(0);
  });
});

describeEachDatabase('saving and delivering to host names through the DNS on $name', (kind) => {
  let dns: TestDnsServer;
  let t: TestAppWithKit;
  beforeAll(async () => {
    dns = await TestDnsServer.start({ blackHoledZones: ['slow.test'] });
    dns.set('hooks.ok.test', { a: ['127.0.0.1'], ttlSeconds: 30 });
    dns.set('shared.ok.test', { a: ['127.0.0.1'], ttlSeconds: 30, delayMs: 300 });
    dns.set('private.ok.test', { a: ['10.0.0.1'], ttlSeconds: 30 });
    dns.set(RECEIVER_HOSTNAME, { a: ['127.0.0.1'], ttlSeconds: 30 });
    t = await startTestAppWithKit(kind, {
      resolver: undefined, // the kit's resolver replaced by the DNS
      allowedCidrs: ['127.0.0.0/8', '::1/128'],
      hostResolution: { servers: [dns.address], saveTimeoutMs: SAVE_TIMEOUT_MS, maxInFlightPerUser: PER_USER },
      delivery: { timeoutMs: ATTEMPT_TIMEOUT_MS },
    });
  });
  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  const save = (userId: number, webhookUrl: string, type = 'RATE_SPIKE') =>
    t.http().put(SETTINGS).set('Authorization', t.bearer(userId)).send({ type, channel: 'WEBHOOK', enabled: true, webhookUrl });
  const namesQueried = (names: string[]) => names.filter((name) => dns.queriesFor(name).length > 0);

  it('answers a save of a name whose DNS never answers with a 400 naming webhookUrl, within the deadline', async () => {
    const { result, ms } = await timed(() => save(101, 'https://r0.slow.test/hook'));
    expect(result.status).toBe(400);
    expect(result.body.message).toMatch(/^webhookUrl must have a host name that resolves within 2 s/);
    expect(result.body.errors).toEqual([{ field: 'webhookUrl', message: expect.stringContaining('no DNS answer in time') }]);
    expect(ms).toBeGreaterThanOrEqual(SAVE_TIMEOUT_MS - 10);
    expect(ms).toBeLessThan(SAVE_TIMEOUT_MS + SLACK_MS);
  });

  it("keeps one user's lookups within the cap while another user's saves answer promptly", async () => {
    const names = Array.from({ length: 8 }, (_, i) => `r${i}.flood.slow.test`);
    const flood = timed(() => Promise.all(names.map((name) => save(102, `https://${name}/hook`))));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the flood's lookups are in flight
    const other = await timed(() => save(103, 'https://hooks.ok.test/hook'));
    expect(other.result.status).toBe(200);
    expect(other.ms).toBeLessThan(SAVE_TIMEOUT_MS);

    const { result: answers, ms } = await flood;
    expect(answers.map((response) => response.status)).toEqual(Array(names.length).fill(400));
    expect(answers.every((response) => (response.body as { errors: { field: string }[] }).errors[0].field === 'webhookUrl')).toBe(true);
    expect(ms).toBeLessThan(SAVE_TIMEOUT_MS + SLACK_MS);
    expect(namesQueried(names)).toHaveLength(PER_USER);
    expect(answers.filter((response) => /too many of your host name lookups/.test(response.body.message))).toHaveLength(
      names.length - PER_USER,
    );
  });

  it('shares a lookup in flight between users, and reuses the answer within its TTL, asking again after it', async () => {
    const before = dns.questionsFor('shared.ok.test', 'A');
    const [first, second] = await Promise.all([save(104, 'https://shared.ok.test/a'), save(105, 'https://shared.ok.test/b')]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const aQueries = () => dns.questionsFor('shared.ok.test', 'A') - before;
    expect(aQueries()).toBe(1);

    t.advance(29_000);
    await save(106, 'https://shared.ok.test/c').expect(200);
    expect(aQueries()).toBe(1);
    t.advance(2_000); // past the 30 s TTL
    await save(106, 'https://shared.ok.test/d').expect(200);
    expect(aQueries()).toBe(2);
  });

  it('still refuses a name that resolves to a private address, and accepts a name that does not exist', async () => {
    const refused = await save(107, 'https://private.ok.test/hook').expect(400);
    expect(refused.body.message).toBe('webhookUrl must not resolve to an address that is not public');
    await save(107, 'https://missing.ok.test/hook').expect(200);
  });

  it('accepts localhost and IP literals without the DNS, as getaddrinfo did', async () => {
    const before = dns.queries.length;
    await save(108, 'https://localhost:8443/hook').expect(200);
    await save(108, 'https://127.0.0.1:8443/hook', 'RATE_DROP').expect(200);
    await save(108, 'https://[::1]:8443/hook', 'LOAN_EXECUTED').expect(200);
    expect(dns.queries.length).toBe(before);
  });

  it('delivers to a name resolved through the DNS at connect time', async () => {
    await t.enableWebhook(109, 'RATE_SPIKE', '/dns');
    await t.publish({ userId: 109, type: 'RATE_SPIKE', severity: 'INFO', title: 'Spike', body: 'USD' }).expect(202);
    const [request] = await t.waitForDelivery({ userId: 109, path: '/dns' });
    expect(request.json()).toMatchObject({ userId: 109, type: 'RATE_SPIKE' });
  });

  it('ends a connect-time lookup that gets no answer within the attempt deadline, as a failed attempt', async () => {
    dns.set('turns-silent.ok.test', { a: ['127.0.0.1'], ttlSeconds: 30 });
    await save(110, 'https://turns-silent.ok.test/hook').expect(200);
    dns.blackHole('turns-silent.ok.test');
    const asked = dns.queriesFor('turns-silent.ok.test').length;
    t.advance(31_000); // the saved answer's TTL is over: the connection must ask again
    const { ms } = await timed(async () => {
      await t.publish({ userId: 110, type: 'RATE_SPIKE', severity: 'INFO', title: 'Spike', body: 'USD' }).expect(202);
      await t.settle();
    });
    expect(ms).toBeLessThan(ATTEMPT_TIMEOUT_MS + SLACK_MS);
    expect(dns.queriesFor('turns-silent.ok.test').length).toBeGreaterThan(asked);
    const log = await t.http().get(DELIVERIES).set('Authorization', t.bearer(110)).expect(200);
    expect(log.body.data).toEqual([
      expect.objectContaining({ status: 'PENDING', attemptCount: 1, lastError: `timed out after ${ATTEMPT_TIMEOUT_MS} ms` }),
    ]);
  });
});
