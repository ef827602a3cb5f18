import { request as httpsRequest } from 'node:https';
import { signWebhook } from '../notifications/delivery/wire/webhook-signature';
import { startTestReceiver, type TestReceiver } from './test-receiver';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  elapsedMs: number;
}

describe('test receiver', () => {
  let receiver: TestReceiver;

  beforeAll(async () => {
    receiver = await startTestReceiver();
  });
  afterAll(() => receiver.close());
  beforeEach(() => receiver.clear());

  const post = (path: string, body = '{}', headers: Record<string, string> = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const started = Date.now();
      const req = httpsRequest(
        receiver.url(path),
        { method: 'POST', ca: receiver.caPem, agent: false, headers: { 'content-type': 'application/json', ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString(),
              elapsedMs: Date.now() - started,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('counts the requests in flight and their peak, which clear() starts again from those still in flight', async () => {
    receiver.respondWith({ status: 204, delayMs: 200 }, { path: '/slow' });
    const answers = Promise.all([post('/slow'), post('/slow'), post('/slow')]);
    await receiver.waitForRequests(3);
    expect(receiver.inFlight).toBe(3);
    await answers;
    await vi.waitFor(() => expect(receiver.inFlight).toBe(0));
    await post('/fast');
    expect(receiver.peakInFlight).toBe(3);
    receiver.clear();
    expect(receiver.peakInFlight).toBe(0);
    await post('/fast');
    expect(receiver.peakInFlight).toBe(1);
  });
  it('records the exact body bytes and headers, and checks the signature against a secret', async () => {
    const body = '{"type":"RATE_SPIKE", "userId":9}';
    const timestamp = 1_790_000_000;
    await post('/signed', body, {
      'x-service-type': 'RATE_SPIKE',
      'x-service-timestamp': String(timestamp),
      'x-service-signature': signWebhook('whsec_right', timestamp, body),
    });

    const [received] = receiver.requests;
    expect(received.rawBody.toString()).toBe(body);
    expect(received).toMatchObject({ method: 'POST', path: '/signed', type: 'RATE_SPIKE' });
    expect(received.json()).toEqual({ type: 'RATE_SPIKE', userId: 9 });
    expect(received.isSignedWith('whsec_right')).toBe(true);
    expect(received.isSignedWith('whsec_wrong')).toBe(false);
    expect(received.isSignedWith('whsec_right', { toleranceSeconds: 300, now: Date.now() })).toBe(false);
  });

  it('answers per call first, then per path, then for every path', async () => {
    receiver.respondWith({ status: 500 });
    receiver.respondWith({ status: 202, body: 'path' }, { path: '/a' });
    receiver.respondNext([{ status: 429 }, { status: 201 }], { path: '/a' });

    const statuses = [];
    for (const path of ['/a', '/b', '/a', '/a']) statuses.push((await post(path)).status);
    expect(statuses).toEqual([429, 500, 201, 202]);
  });

  it('delays, redirects and resets when told to', async () => {
    receiver.respondNext([{ status: 200, delayMs: 300 }, { redirectTo: 'https://elsewhere.example/' }, 'reset']);
    const delayed = await post('/x');
    expect(delayed.elapsedMs).toBeGreaterThanOrEqual(290);
    const redirected = await post('/x');
    expect(redirected).toMatchObject({ status: 302, headers: { location: 'https://elsewhere.example/' } });
    await expect(post('/x')).rejects.toThrow(/ECONNRESET|aborted|socket hang up/);
  });

  it('waits for matching requests and, on timeout, lists what did arrive', async () => {
    await post('/hook', '{"userId":1}', { 'x-service-type': 'RATE_DROP', 'x-service-event-id': 'e-1' });
    await expect(receiver.waitForDelivery({ type: 'RATE_DROP', userId: 1 })).resolves.toHaveLength(1);
    await expect(receiver.waitForDelivery({ type: 'LOAN_EXECUTED', count: 2, timeoutMs: 100 })).rejects.toThrow(
      'waitForDelivery: expected 2 deliveries matching type=LOAN_EXECUTED within 100 ms, 0 matched; 1 arrived:\n  - POST /hook RATE_DROP user 1 event e-1',
    );
    const later = receiver.waitForDelivery({ eventId: 'e-2' });
    await post('/hook', '{}', { 'x-service-event-id': 'e-2' });
    expect((await later).map((request) => request.eventId)).toEqual(['e-2']);
  });
});
