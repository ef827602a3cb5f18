import type { LookupAddress, LookupOptions } from 'node:dns';
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:https';
import { type AddressInfo, connect, type LookupFunction, type TcpNetConnectOpts } from 'node:net';
import { generate } from 'selfsigned';
import {
  type HostResolver,
  UnsafeWebhookUrlError,
  WEBHOOK_BLOCKED_CODE,
  WebhookAddressBlockedError,
  WebhookUrlPolicy,
} from './webhook-url-policy';

const RECEIVER = 'receiver.test';
const PUBLIC_IPV4 = '93.184.215.14';
const PUBLIC_IPV6 = '2606:4700:4700::1111';
const LOOPBACK_ALLOWED = ['127.0.0.0/8'];
const BLOCKED = { code: WEBHOOK_BLOCKED_CODE, message: 'must not resolve to an address that is not public' };

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

function failingResolver(code: string): RecordingResolver {
  const calls: string[] = [];
  return Object.assign(
    async (hostname: string) => {
      calls.push(hostname);
      throw Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code });
    },
    { calls },
  );
}

interface LookupResult {
  address: string | LookupAddress[];
  family?: number;
}

function callLookup(lookup: LookupFunction, hostname: string, options: LookupOptions): Promise<LookupResult> {
  return new Promise((resolve, reject) => {
    lookup(hostname, options, (error, address, family) => (error ? reject(error) : resolve({ address, family })));
  });
}

describe('WebhookUrlPolicy.createLookup against a loopback receiver', () => {
  let server: Server;
  let port: number;
  let ca: string;
  let connections = 0;

  beforeAll(async () => {
    const pems = await generate([{ name: 'commonName', value: RECEIVER }], {
      keyType: 'ec',
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: RECEIVER }] }],
    });
    ca = pems.cert;
    server = createServer({ key: pems.private, cert: pems.cert }, (_request, response) => response.end('delivered'));
    server.on('connection', () => connections++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  beforeEach(() => {
    connections = 0;
  });

  function post(policy: WebhookUrlPolicy, url: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const outgoing = request(url, { method: 'POST', lookup: policy.createLookup(), ca, agent: false }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      outgoing.on('error', reject);
      outgoing.end('{}');
    });
  }

  /** Resolves once both ends saw the TCP connection; rejects with the client's error otherwise. */
  function tcpConnect(
    policy: WebhookUrlPolicy,
    host: string,
    options: Pick<TcpNetConnectOpts, 'family' | 'autoSelectFamily'>,
  ): Promise<void> {
    const accepted = once(server, 'connection');
    return new Promise<void>((resolve, reject) => {
      const socket = connect({ host, port, lookup: policy.createLookup(), ...options });
      socket.on('error', reject);
      socket.on('connect', () => {
        accepted.then(() => {
          socket.destroy();
          resolve();
        }, reject);
      });
    });
  }

  it('(a) reaches the receiver when its address is allow-listed', async () => {
    const resolver = resolverAnswering(['127.0.0.1']);
    const policy = new WebhookUrlPolicy({ resolver, allowedCidrs: LOOPBACK_ALLOWED });

    await expect(post(policy, `https://${RECEIVER}:${port}/hook`)).resolves.toEqual({ status: 200, body: 'delivered' });
    expect(connections).toBe(1);
    expect(resolver.calls).toEqual([RECEIVER]);
  });

  it('(b) blocks a name resolving to loopback before any connection is made', async () => {
    const resolver = resolverAnswering(['127.0.0.1']);
    const error: unknown = await post(new WebhookUrlPolicy({ resolver }), `https://${RECEIVER}:${port}/hook`).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UnsafeWebhookUrlError);
    expect(error).toMatchObject(BLOCKED);
    expect(connections).toBe(0);
    expect(resolver.calls).toEqual([RECEIVER]);
  });

  it('(c) defeats DNS rebinding: public at save time, loopback at connect time', async () => {
    const resolver = resolverAnswering([PUBLIC_IPV4], ['127.0.0.1']);
    const policy = new WebhookUrlPolicy({ resolver });
    const url = `https://${RECEIVER}:${port}/hook`;

    await expect(policy.assertSafeToSave(url)).resolves.toBeInstanceOf(URL);
    await expect(post(policy, url)).rejects.toMatchObject(BLOCKED);
    expect(connections).toBe(0);
    expect(resolver.calls).toEqual([RECEIVER, RECEIVER]);
  });

  it('blocks when any answer is refused, even if an allowed one comes first', async () => {
    const resolver = resolverAnswering(['127.0.0.1', '10.0.0.1']);
    const policy = new WebhookUrlPolicy({ resolver, allowedCidrs: LOOPBACK_ALLOWED });

    await expect(post(policy, `https://${RECEIVER}:${port}/hook`)).rejects.toMatchObject({
      code: WEBHOOK_BLOCKED_CODE,
      message: 'must not resolve to an address that is not public',
    });
    expect(connections).toBe(0);
  });

  it.each([
    ['one address (family 4)', { family: 4, autoSelectFamily: false }],
    ['all addresses (happy eyeballs)', { autoSelectFamily: true }],
  ])('works as net.connect lookup asking for %s', async (_mode, options) => {
    const allowed = new WebhookUrlPolicy({ resolver: resolverAnswering(['127.0.0.1']), allowedCidrs: LOOPBACK_ALLOWED });
    await tcpConnect(allowed, RECEIVER, options);
    expect(connections).toBe(1);

    const blocked = new WebhookUrlPolicy({ resolver: resolverAnswering(['127.0.0.1']) });
    await expect(tcpConnect(blocked, RECEIVER, options)).rejects.toMatchObject(BLOCKED);
    expect(connections).toBe(1);
  });

  it('is bypassed by Node for an IP-literal host, which is why the sender calls assertLiteralHostAllowed', async () => {
    const policy = new WebhookUrlPolicy({ resolver: resolverAnswering([PUBLIC_IPV4]) });
    await tcpConnect(policy, '127.0.0.1', {});
    expect(connections).toBe(1);
    expect(() => policy.assertLiteralHostAllowed('127.0.0.1')).toThrow(WebhookAddressBlockedError);
  });
});

describe('WebhookUrlPolicy.createLookup options', () => {
  const dualStack = () => new WebhookUrlPolicy({ resolver: resolverAnswering([PUBLIC_IPV6, PUBLIC_IPV4]) }).createLookup();
  const v4 = { address: PUBLIC_IPV4, family: 4 };
  const v6 = { address: PUBLIC_IPV6, family: 6 };

  it.each<[string, LookupOptions, LookupResult]>([
    ['no options: the first answer', {}, v6],
    ['family 0', { family: 0 }, v6],
    ['family 4', { family: 4 }, v4],
    ["family 'IPv4'", { family: 'IPv4' }, v4],
    ['family 6', { family: 6 }, v6],
    ['all', { all: true }, { address: [v6, v4], family: undefined }],
    ['all, family 4', { all: true, family: 4 }, { address: [v4], family: undefined }],
    ["all, family 'IPv6'", { all: true, family: 'IPv6' }, { address: [v6], family: undefined }],
  ])('honours %s', async (_case, options, expected) => {
    await expect(callLookup(dualStack(), 'hooks.example.com', options)).resolves.toEqual(expected);
  });

  it('checks every answer, not only those of the requested family', async () => {
    const lookup = new WebhookUrlPolicy({ resolver: resolverAnswering([PUBLIC_IPV4, 'fe80::1']) }).createLookup();
    await expect(callLookup(lookup, 'hooks.example.com', { family: 4 })).rejects.toMatchObject({
      code: WEBHOOK_BLOCKED_CODE,
      message: 'must not resolve to an address that is not public',
      hostname: 'hooks.example.com',
    });
  });

  it.each<[string, HostResolver, LookupOptions, string]>([
    ['no answer of the requested family', resolverAnswering([PUBLIC_IPV4]), { family: 6 }, 'ENOTFOUND'],
    ['no answers at all', resolverAnswering([]), { all: true }, 'ENOTFOUND'],
    ['a resolver failure, passed through', failingResolver('EAI_AGAIN'), {}, 'EAI_AGAIN'],
  ])('fails with %s', async (_case, resolver, options, code) => {
    const lookup = new WebhookUrlPolicy({ resolver }).createLookup();
    await expect(callLookup(lookup, 'hooks.example.com', options)).rejects.toMatchObject({ code });
  });

  it.each([
    ['an IPv4 literal', '127.0.0.1', 'must not target a loopback address (127.0.0.0/8)'],
    [
      'an IPv6 literal',
      '::ffff:169.254.169.254',
      'must not target an IPv4-mapped address (::ffff:0:0/96) embedding a link-local address (169.254.0.0/16)',
    ],
    ['localhost', 'localhost', 'must not target a loopback address (127.0.0.0/8)'],
  ])('checks %s itself, without the resolver', async (_case, hostname, message) => {
    const resolver = resolverAnswering([PUBLIC_IPV4]);
    const lookup = new WebhookUrlPolicy({ resolver }).createLookup();
    await expect(callLookup(lookup, hostname, { all: true })).rejects.toMatchObject({ code: WEBHOOK_BLOCKED_CODE, message });
    expect(resolver.calls).toEqual([]);
  });

  it('returns an allowed IP literal as is', async () => {
    const resolver = resolverAnswering(['127.0.0.1']);
    const lookup = new WebhookUrlPolicy({ resolver }).createLookup();
    await expect(callLookup(lookup, PUBLIC_IPV6, {})).resolves.toEqual(v6);
    expect(resolver.calls).toEqual([]);
  });
});

describe('WebhookUrlPolicy.assertLiteralHostAllowed', () => {
  const policy = new WebhookUrlPolicy({ resolver: resolverAnswering(['127.0.0.1']) });
  const allowLoopback = new WebhookUrlPolicy({ resolver: resolverAnswering(['127.0.0.1']), allowedCidrs: LOOPBACK_ALLOWED });

  it.each([
    ['127.0.0.1', 'must not target a loopback address (127.0.0.0/8)'],
    ['[::1]', 'must not target a loopback address (::1/128)'],
    ['::1', 'must not target a loopback address (::1/128)'],
    ['[::ffff:7f00:1]', 'must not target an IPv4-mapped address (::ffff:0:0/96) embedding a loopback address (127.0.0.0/8)'],
    ['169.254.169.254', 'must not target a link-local address (169.254.0.0/16)'],
    ['api.localhost', 'must not target a loopback address (127.0.0.0/8)'],
  ])('refuses %s with code EWEBHOOKBLOCKED', (hostname, message) => {
    expect(() => policy.assertLiteralHostAllowed(hostname)).toThrow(message);
    expect(() => policy.assertLiteralHostAllowed(hostname)).toThrow(expect.objectContaining({ code: WEBHOOK_BLOCKED_CODE, hostname }));
  });

  it.each([
    ['a public literal', policy, '8.8.8.8'],
    ['a bracketed public IPv6 literal', policy, `[${PUBLIC_IPV6}]`],
    ['a name, left to the lookup', policy, RECEIVER],
    ['an allow-listed literal', allowLoopback, '127.0.0.1'],
  ])('accepts %s', (_case, subject, hostname) => {
    expect(() => subject.assertLiteralHostAllowed(hostname)).not.toThrow();
  });
});
