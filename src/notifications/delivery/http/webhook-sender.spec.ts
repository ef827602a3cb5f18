import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { generate } from 'selfsigned';
import { RECEIVER_HOSTNAME, startTestReceiver, type TestReceiver } from '../../../testing';
import { type HostResolver, WebhookUrlPolicy } from '../../url-policy/webhook-url-policy';
import { type AttemptResult, WebhookSender, type WebhookSenderOptions } from './webhook-sender';

const LOOPBACK_ALLOWED = ['127.0.0.0/8'];
const PUBLIC_IPV4 = '93.184.215.14';

type RecordingResolver = HostResolver & { calls: string[] };

/** Answers each call with the next entry of `answersPerCall` (the last one repeats), recording the names asked. */
function resolverAnswering(...answersPerCall: string[][]): RecordingResolver {
  const calls: string[] = [];
  return Object.assign(
    async (hostname: string) => {
      calls.push(hostname);
      return answersPerCall[Math.min(calls.length, answersPerCall.length) - 1];
    },
    { calls },
  );
}

describe('WebhookSender against a loopback HTTPS receiver', () => {
  let receiver: TestReceiver;
  const cleanups: Array<() => Promise<void>> = [];

  beforeEach(async () => {
    receiver = await startTestReceiver();
    cleanups.push(() => receiver.close());
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A sender trusting the receiver's certificate and allowed to reach loopback, unless overridden. */
  function sender(options: Partial<WebhookSenderOptions> = {}): WebhookSender {
    const created = new WebhookSender({
      urlPolicy: new WebhookUrlPolicy({ allowedCidrs: LOOPBACK_ALLOWED }),
      extraCaPem: receiver.caPem,
      ...options,
    });
    cleanups.push(() => created.close());
    return created;
  }

  async function anotherReceiver(): Promise<TestReceiver> {
    const other = await startTestReceiver();
    cleanups.push(() => other.close());
    return other;
  }

  function post(target: WebhookSender, url: string, body = '{}', headers: Record<string, string> = {}) {
    return target.send({ url, body, headers });
  }

  describe('delivery', () => {
    it('POSTs the exact body bytes and every supplied header, and reports 204 as success', async () => {
      const body = '{"event":"funding.approved","amount":"1 250,00 €","note":"naïve ✓ 😀"}';
      const headers = {
        'Content-Type': 'application/json; charset=utf-8',
        'User-Agent': 'FundingWebhooks/1.0 (+https://example.com/webhooks)',
        'X-Service-Type': 'funding-automation',
        'X-Webhook-Signature': 't=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
        'X-Webhook-Id': '9b2f6c1e-2f0a-4c55-8b87-0d8a3b2f1c11',
      };

      const result = await post(sender(), receiver.url('/hooks/funding?tenant=42'), body, headers);

      expect(result).toEqual<AttemptResult>({
        outcome: 'success',
        statusCode: 204,
        durationMs: expect.any(Number),
        sentAfterMs: expect.any(Number),
        error: null,
        responseExcerpt: null,
      });
      expect(Number.isInteger(result.durationMs)).toBe(true);
      // When the request was written: after the connect, before the answer (the engine dates a late answer by it).
      expect(result.sentAfterMs).toBeGreaterThanOrEqual(0);
      expect(result.sentAfterMs).toBeLessThanOrEqual(result.durationMs);
      const [received] = await receiver.waitForRequests(1);
      expect(received.method).toBe('POST');
      expect(received.path).toBe('/hooks/funding?tenant=42');
      expect(received.rawBody.equals(Buffer.from(body, 'utf8'))).toBe(true);
      expect(received.headers['content-length']).toBe(String(Buffer.byteLength(body, 'utf8')));
      for (const [name, value] of Object.entries(headers)) expect(received.headers[name.toLowerCase()]).toBe(value);
    });

    it('adds nothing but Host, Connection and Content-Length (no User-Agent of its own)', async () => {
      await post(sender(), receiver.url(), 'x', { 'X-Service-Type': 'bare' });

      const [received] = await receiver.waitForRequests(1);
      expect(Object.keys(received.headers).sort()).toEqual(['connection', 'content-length', 'host', 'x-service-type']);
      expect(received.headers.host).toBe(`127.0.0.1:${receiver.port}`);
    });

    it('reports a 500 as http_error with its status code and the start of the body', async () => {
      receiver.respondWith({ status: 500, headers: { 'content-type': 'text/plain' }, body: 'database is down' });

      const result = await post(sender(), receiver.url());

      expect(result).toMatchObject({
        outcome: 'http_error',
        statusCode: 500,
        error: 'receiver answered 500',
        responseExcerpt: 'database is down',
      });
    });

    it('caps the response excerpt at 1024 bytes, and drops the connection of a body too large to drain (100 KB)', async () => {
      const body = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(3000); // ~105 KB
      receiver.respondWith({ status: 200, body });
      const target = sender({ connectionsPerOrigin: 1 });

      const results = await Promise.all([1, 2, 3].map(() => post(target, receiver.url())));

      expect(results.map((result) => [result.outcome, result.statusCode])).toEqual(Array(3).fill(['success', 200]));
      expect(results[0].responseExcerpt).toBe(body.slice(0, 1024));
      expect(receiver.connections).toBe(3);
    });

    it('reads a response body larger than the excerpt (20 KB) to its end, so the connection serves the next attempt', async () => {
      const body = 'x'.repeat(20_000);
      receiver.respondWith({ status: 200, body });
      const target = sender({ connectionsPerOrigin: 1 });

      const results = await Promise.all([1, 2, 3].map(() => post(target, receiver.url())));

      expect(results.map((result) => result.outcome)).toEqual(['success', 'success', 'success']);
      expect(results[2].responseExcerpt).toBe(body.slice(0, 1024));
      expect(receiver.connections).toBe(1);
    });

    it('cuts the excerpt at a character boundary and honours maxResponseBytes', async () => {
      receiver.respondWith({ status: 400, body: 'é'.repeat(100) }); // 200 bytes

      const result = await post(sender({ maxResponseBytes: 15 }), receiver.url());

      expect(result).toMatchObject({ outcome: 'http_error', statusCode: 400, responseExcerpt: 'é'.repeat(7) });
    });

    it('reports a 302 as http_error and never requests the redirect target', async () => {
      const target = await anotherReceiver();
      receiver.respondWith({ redirectTo: target.url('/elsewhere') });

      const result = await post(sender(), receiver.url());

      expect(result).toMatchObject({ outcome: 'http_error', statusCode: 302, error: 'redirect (302) not followed' });
      expect(receiver.requests).toHaveLength(1);
      expect(target.requests).toHaveLength(0);
      expect(target.connections).toBe(0);
    });

    it('reaches a host name through the injected resolver when its answer is allow-listed', async () => {
      const resolver = resolverAnswering(['127.0.0.1']);
      const target = sender({ urlPolicy: new WebhookUrlPolicy({ resolver, allowedCidrs: LOOPBACK_ALLOWED }) });

      const result = await post(target, `https://${RECEIVER_HOSTNAME}:${receiver.port}/hook`);

      expect(result).toMatchObject({ outcome: 'success', statusCode: 204, error: null });
      expect(resolver.calls).toEqual([RECEIVER_HOSTNAME]);
      const [received] = await receiver.waitForRequests(1);
      expect(received.headers.host).toBe(`${RECEIVER_HOSTNAME}:${receiver.port}`);
    });

    it('delivers 200 concurrent sends over a bounded keep-alive pool', async () => {
      const target = sender({ connectionsPerOrigin: 16 });
      const count = 200;

      const startedAt = performance.now();
      const results = await Promise.all(Array.from({ length: count }, (_, i) => post(target, receiver.url(`/hook/${i}`), `{"n":${i}}`)));
      const elapsedMs = performance.now() - startedAt;

      const outcomes = results.map((result) => result.outcome);
      expect(outcomes.filter((outcome) => outcome !== 'success')).toEqual([]);
      expect(receiver.requests).toHaveLength(count);
      expect(new Set(receiver.requests.map((request) => request.path)).size).toBe(count);
      expect(receiver.connections).toBeGreaterThan(0);
      expect(receiver.connections).toBeLessThanOrEqual(16);
      console.info(
        `[webhook-sender] ${count} concurrent sends in ${elapsedMs.toFixed(0)} ms ` +
          `(${Math.round((count / elapsedMs) * 1000)}/s, cold pool, ${receiver.connections} connections)`,
      );
    });
  });

  describe('transport failures', () => {
    it('times out a receiver that never answers, within about timeoutMs', async () => {
      receiver.respondWith('hang');

      const startedAt = performance.now();
      const result = await post(sender({ timeoutMs: 300 }), receiver.url());
      const elapsedMs = performance.now() - startedAt;

      expect(result).toMatchObject({
        outcome: 'timeout',
        statusCode: null,
        error: 'timed out after 300 ms',
        responseExcerpt: null,
      });
      expect(result.durationMs).toBeGreaterThanOrEqual(300);
      expect(result.durationMs).toBeLessThan(1500);
      expect(elapsedMs).toBeGreaterThanOrEqual(290);
      expect(elapsedMs).toBeLessThan(1500);
      expect(receiver.requests).toHaveLength(1);
    });

    it('times out an attempt still queued for a pooled connection, and never sends it afterwards', async () => {
      receiver.respondWith('hang');
      const target = sender({ timeoutMs: 300, connectionsPerOrigin: 1 });

      const results = await Promise.all([post(target, receiver.url('/first')), post(target, receiver.url('/queued'))]);

      expect(results.map((result) => result.outcome)).toEqual(['timeout', 'timeout']);
      expect(results[1].durationMs).toBeLessThan(1500);
      await target.close(); // every socket it opened is gone, so nothing can still be on its way
      expect(receiver.requests.map((request) => request.path)).toEqual(['/first']);
    });

    it('never writes a queued request whose deadline passed while the process was paused, before its timer ran', async () => {
      receiver.respondWith({ status: 204, delayMs: 100 });
      const target = sender({ timeoutMs: 300, connectionsPerOrigin: 1 });
      const first = post(target, receiver.url('/first'));
      const queued = post(target, receiver.url('/queued'));
      await receiver.waitForDelivery({ path: '/first' });

      // A pause (SIGSTOP, a stalled VM) from here: the monotonic clock jumps past the queued attempt's deadline, and the
      // answer freeing the connection is read as the process wakes, before the deadline's timer runs.
      const now = performance.now.bind(performance);
      vi.spyOn(performance, 'now').mockImplementation(() => now() + 1_000);
      const results = await Promise.all([first, queued]);

      expect(results.map((result) => result.outcome)).toEqual(['success', 'timeout']);
      await target.close();
      expect(receiver.requests.map((request) => request.path)).toEqual(['/first']);
    });

    it('applies one deadline to the whole attempt, even while the body keeps trickling in', async () => {
      // Each chunk arrives well within bodyTimeout, so only the overall deadline can end this attempt.
      const pems = await generate([{ name: 'commonName', value: 'trickle.test' }], {
        keyType: 'ec',
        algorithm: 'sha256',
        extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
      });
      const timers = new Set<NodeJS.Timeout>();
      const trickler = createHttpsServer({ key: pems.private, cert: pems.cert }, (request, response) => {
        request.resume();
        response.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => response.write('.'), 40);
        timers.add(timer);
        response.on('close', () => clearInterval(timer));
      });
      trickler.listen(0, '127.0.0.1');
      await once(trickler, 'listening');
      cleanups.push(async () => {
        for (const timer of timers) clearInterval(timer);
        trickler.closeAllConnections();
        await new Promise((resolve) => trickler.close(resolve));
      });
      const url = `https://127.0.0.1:${(trickler.address() as AddressInfo).port}/hook`;

      const result = await post(sender({ timeoutMs: 300, extraCaPem: pems.cert }), url);

      expect(result).toMatchObject({ outcome: 'timeout', statusCode: 200, error: 'timed out after 300 ms' });
      expect(result.responseExcerpt).toMatch(/^\.+$/);
      expect(result.durationMs).toBeGreaterThanOrEqual(300);
      expect(result.durationMs).toBeLessThan(1500);
    });

    it('reports a connection reset in the middle of the response as connect_error', async () => {
      receiver.respondWith('reset');

      const result = await post(sender(), receiver.url());

      expect(result.outcome).toBe('connect_error');
      expect(result.error).toMatch(/^connection (reset|closed) by the receiver$/);
      expect(receiver.requests).toHaveLength(1);
    });

    it('reports a connection dropped before any response as connect_error', async () => {
      const dropper: TcpServer = createTcpServer((socket) => socket.destroy());
      dropper.listen(0, '127.0.0.1');
      await once(dropper, 'listening');
      cleanups.push(() => new Promise((resolve) => dropper.close(() => resolve())));

      const result = await post(sender(), `https://127.0.0.1:${(dropper.address() as AddressInfo).port}/hook`);

      expect(result).toMatchObject({ outcome: 'connect_error', statusCode: null });
      expect(result.error).toMatch(/^connection (reset|closed) by the receiver$/);
    });

    it('reports a closed port as connect_error', async () => {
      const probe = createTcpServer();
      probe.listen(0, '127.0.0.1');
      await once(probe, 'listening');
      const closedPort = (probe.address() as AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));

      const result = await post(sender(), `https://127.0.0.1:${closedPort}/hook`);

      expect(result).toMatchObject({ outcome: 'connect_error', statusCode: null, error: 'connection refused' });
      expect(result.sentAfterMs).toBeUndefined(); // no request was written
    });

    it('refuses an untrusted self-signed certificate as tls_error without sending the request', async () => {
      const result = await post(sender({ extraCaPem: undefined }), receiver.url(), '{"secret":"payload"}');

      expect(result).toMatchObject({ outcome: 'tls_error', statusCode: null, error: 'self-signed certificate' });
      expect(result.sentAfterMs).toBeUndefined();
      expect(receiver.requests).toHaveLength(0);
    });

    it('still trusts the CAs of NODE_EXTRA_CA_CERTS when extraCaPem adds another one', async () => {
      const other = await anotherReceiver();
      const dir = mkdtempSync(join(tmpdir(), 'extra-ca-'));
      writeFileSync(join(dir, 'ca.pem'), receiver.caPem);
      vi.stubEnv('NODE_EXTRA_CA_CERTS', join(dir, 'ca.pem'));
      try {
        const result = await post(sender({ extraCaPem: other.caPem }), receiver.url());
        expect(result).toMatchObject({ outcome: 'success', statusCode: 204 });
      } finally {
        vi.unstubAllEnvs();
        rmSync(dir, { recursive: true });
      }
    });

    it('refuses a certificate that does not name the host as tls_error', async () => {
      const resolver = resolverAnswering(['127.0.0.1']);
      const target = sender({ urlPolicy: new WebhookUrlPolicy({ resolver, allowedCidrs: LOOPBACK_ALLOWED }) });

      const result = await post(target, `https://other.test:${receiver.port}/hook`);

      expect(result.outcome).toBe('tls_error');
      expect(result.error).toMatch(
        /^hostname does not match certificate \(Host: other\.test\. is not in the cert's altnames: .*receiver\.test.*\)$/,
      );
      expect(receiver.requests).toHaveLength(0);
    });
  });

  describe('address policy', () => {
    it('blocks a name resolving to loopback when loopback is not allow-listed, before any connection', async () => {
      const resolver = resolverAnswering(['127.0.0.1']);
      const target = sender({ urlPolicy: new WebhookUrlPolicy({ resolver }) });

      const result = await post(target, `https://${RECEIVER_HOSTNAME}:${receiver.port}/hook`);

      expect(result).toMatchObject({
        outcome: 'blocked',
        statusCode: null,
        error: 'blocked: must not resolve to an address that is not public',
      });
      expect(resolver.calls).toEqual([RECEIVER_HOSTNAME]);
      expect(receiver.connections).toBe(0);
    });

    it('blocks DNS rebinding: public at save time, loopback at connect time', async () => {
      const resolver = resolverAnswering([PUBLIC_IPV4], ['127.0.0.1']);
      const urlPolicy = new WebhookUrlPolicy({ resolver });
      const url = `https://${RECEIVER_HOSTNAME}:${receiver.port}/hook`;
      await expect(urlPolicy.assertSafeToSave(url)).resolves.toBeInstanceOf(URL);

      const result = await post(sender({ urlPolicy }), url);

      expect(result).toMatchObject({
        outcome: 'blocked',
        error: 'blocked: must not resolve to an address that is not public',
      });
      expect(resolver.calls).toEqual([RECEIVER_HOSTNAME, RECEIVER_HOSTNAME]);
      expect(receiver.connections).toBe(0);
    });

    it('blocks a loopback IP literal without asking any resolver or connecting', async () => {
      const resolver = resolverAnswering(['127.0.0.1']);
      const target = sender({ urlPolicy: new WebhookUrlPolicy({ resolver }) });

      const result = await post(target, receiver.url());

      expect(result).toMatchObject({
        outcome: 'blocked',
        statusCode: null,
        error: 'blocked: must not target a loopback address (127.0.0.0/8)',
      });
      expect(resolver.calls).toEqual([]);
      expect(receiver.connections).toBe(0);
    });

    it('blocks a plain http:// URL by the static check', async () => {
      const result = await post(sender(), `http://127.0.0.1:${receiver.port}/hook`);

      expect(result).toMatchObject({ outcome: 'blocked', error: 'blocked: must use the https scheme' });
      expect(receiver.connections).toBe(0);
    });
  });

  describe('never rejects', () => {
    it.each([
      ['a malformed URL', 'not-a-url', 'blocked: must be a valid absolute URL'],
      ['a URL with a broken host', 'https://[::1/hook', 'blocked: must be a valid absolute URL'],
      ['a URL with spaces', 'https://example.com/a hook', 'blocked: must not contain whitespace or control characters'],
      ['an empty URL', '', 'blocked: must be a valid absolute URL'],
      ['a non-string URL', undefined as unknown as string, 'blocked: must be a valid absolute URL'],
      ['credentials in the URL', 'https://user:pw@127.0.0.1/hook', 'blocked: must not contain credentials (user:password@)'],
    ])('resolves for %s', async (_label, url, error) => {
      await expect(post(sender(), url)).resolves.toMatchObject({ outcome: 'blocked', statusCode: null, error });
    });

    it('resolves for a header value undici refuses, without quoting the value', async () => {
      const result = await post(sender(), receiver.url(), '{}', { 'X-Injected': 'ok\r\nX-Evil: secret-value' });

      expect(result).toMatchObject({ outcome: 'connect_error', error: 'request not sent: invalid X-Injected header' });
      expect(result.error).not.toContain('secret-value');
      expect(receiver.connections).toBe(0);
    });

    it('resolves after close()', async () => {
      const target = sender();
      await target.close();

      await expect(post(target, receiver.url())).resolves.toMatchObject({
        outcome: 'connect_error',
        error: 'sender is closed',
      });
      expect(receiver.connections).toBe(0);
    });
  });
});
