import { parseCidrList } from './address-policy';
import { type HostResolver, UnsafeWebhookUrlError, WebhookUrlPolicy } from './webhook-url-policy';

const PUBLIC_IPV4 = '93.184.215.14';
const MAPPED = 'an IPv4-mapped address (::ffff:0:0/96) embedding';
const NOT_PUBLIC = 'must not resolve to an address that is not public';

const dnsError = (code: string) => Object.assign(new Error(`getaddrinfo ${code} hooks.example.com`), { code });
/** A resolver that records the names it was asked for (kept runner-neutral: no jest/vitest mocks). */
function resolvingTo(...answers: string[]): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  return Object.assign(
    async (hostname: string) => {
      calls.push(hostname);
      return answers;
    },
    { calls },
  );
}
function failingWith(error: Error): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  return Object.assign(
    async (hostname: string) => {
      calls.push(hostname);
      throw error;
    },
    { calls },
  );
}
const noDns: HostResolver = () => Promise.reject(new Error('the resolver must not be called'));

function syntaxError(policy: WebhookUrlPolicy, url: string): unknown {
  try {
    policy.checkSyntax(url);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('WebhookUrlPolicy.checkSyntax', () => {
  const policy = new WebhookUrlPolicy({ resolver: noDns });

  it.each([
    ['not a URL', 'hooks.example.com/x', 'must be a valid absolute URL'],
    ['relative path', '/hooks/x', 'must be a valid absolute URL'],
    ['empty', '', 'must be a valid absolute URL'],
    ['no host', 'https://', 'must be a valid absolute URL'],
    ['five-part IPv4', 'https://1.2.3.4.5/', 'must be a valid absolute URL'],
    ['IPv4 above 32 bits', 'https://4294967296/', 'must be a valid absolute URL'],
    ['octet above 255', 'https://256.0.0.1/', 'must be a valid absolute URL'],
    ['IPv6 zone id', 'https://[fe80::1%25eth0]/', 'must be a valid absolute URL'],
    ['encoded slash in host', 'https://127.0.0.1%2f/', 'must be a valid absolute URL'],
    ['http', 'http://hooks.example.com/x', 'must use the https scheme'],
    ['upper-case HTTP', 'HTTP://hooks.example.com/x', 'must use the https scheme'],
    ['ftp', 'ftp://hooks.example.com/x', 'must use the https scheme'],
    ['file', 'file:///etc/passwd', 'must use the https scheme'],
    ['javascript', 'javascript:alert(1)', 'must use the https scheme'],
    ['wss', 'wss://hooks.example.com/x', 'must use the https scheme'],
    ['gopher', 'gopher://127.0.0.1:6379/_INFO', 'must use the https scheme'],
    ['too long', `https://hooks.example.com/${'a'.repeat(2049 - 26)}`, 'must be at most 2048 characters'],
    ['user and password', 'https://user:hunter2@hooks.example.com/x', 'must not contain credentials (user:password@)'],
    ['user only', 'https://user@hooks.example.com/x', 'must not contain credentials (user:password@)'],
    ['password only', 'https://:hunter2@hooks.example.com/x', 'must not contain credentials (user:password@)'],
    ['space in path', 'https://hooks.example.com/a b', 'must not contain whitespace or control characters'],
    ['leading space', ' https://hooks.example.com/x', 'must not contain whitespace or control characters'],
    ['trailing newline', 'https://hooks.example.com/x\n', 'must not contain whitespace or control characters'],
    ['tab inside host', 'https://hooks.exa\tmple.com/x', 'must not contain whitespace or control characters'],
    ['NUL', 'https://hooks.example.com/\u0000', 'must not contain whitespace or control characters'],
    ['DEL', 'https://hooks.example.com/\u007f', 'must not contain whitespace or control characters'],
    ['CR LF header injection', 'https://hooks.example.com/\r\nHost: evil', 'must not contain whitespace or control characters'],
    // localhost
    ['localhost', 'https://localhost/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['upper-case localhost with port', 'https://LOCALHOST:8443/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['localhost with trailing dot', 'https://localhost./x', 'must not target a loopback address (127.0.0.0/8)'],
    ['sub-domain of localhost', 'https://api.localhost/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['mixed-case sub-domain, trailing dots', 'https://a.b.LocalHost../x', 'must not target a loopback address (127.0.0.0/8)'],
    ['full-width localhost', 'https://ＬＯＣＡＬＨＯＳＴ/x', 'must not target a loopback address (127.0.0.0/8)'],
    // loopback literals in the spellings the URL parser normalises
    ['IPv4 loopback', 'https://127.0.0.1/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv4 loopback, decimal', 'https://2130706433/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv4 loopback, octal', 'https://0177.0.0.1/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv4 loopback, hex', 'https://0x7f.1/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv4 loopback, single hex', 'https://0x7f000001/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv4 loopback, short', 'https://127.1/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv4 loopback, percent-encoded', 'https://%31%32%37.0.0.1/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv4 loopback, circled digits', 'https://①②⑦.0.0.1/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv4 loopback, trailing dot', 'https://127.0.0.1.:8443/x', 'must not target a loopback address (127.0.0.0/8)'],
    ['IPv6 loopback', 'https://[::1]/x', 'must not target a loopback address (::1/128)'],
    ['IPv6 loopback, long', 'https://[0:0:0:0:0:0:0:1]:443/x', 'must not target a loopback address (::1/128)'],
    // other categories, IPv4 and IPv6
    ['private', 'https://10.0.0.1/x', 'must not target a private address (10.0.0.0/8)'],
    ['private, hex', 'https://0xc0.0xa8.0.1/x', 'must not target a private address (192.168.0.0/16)'],
    ['private 172.16/12', 'https://172.20.1.1/x', 'must not target a private address (172.16.0.0/12)'],
    ['CGNAT', 'https://100.64.0.1/x', 'must not target a carrier-grade NAT shared address (100.64.0.0/10)'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/', 'must not target a link-local address (169.254.0.0/16)'],
    ['cloud metadata, decimal', 'https://2852039166/latest/', 'must not target a link-local address (169.254.0.0/16)'],
    ['IPv6 link-local', 'https://[fe80::1]/x', 'must not target a link-local address (fe80::/10)'],
    ['benchmarking', 'https://198.18.0.1/x', 'must not target a benchmarking address (198.18.0.0/15)'],
    ['IPv6 benchmarking', 'https://[2001:2::1]/x', 'must not target a benchmarking address (2001:2::/48)'],
    ['documentation', 'https://192.0.2.1/x', 'must not target a documentation address (192.0.2.0/24)'],
    ['IPv6 documentation', 'https://[2001:db8::1]/x', 'must not target a documentation address (2001:db8::/32)'],
    ['multicast', 'https://224.0.0.1/x', 'must not target a multicast address (224.0.0.0/4)'],
    ['IPv6 multicast', 'https://[ff02::1]/x', 'must not target a multicast address (ff00::/8)'],
    ['reserved', 'https://240.0.0.1/x', 'must not target a reserved address (240.0.0.0/4)'],
    ['unspecified', 'https://0.0.0.0/x', 'must not target an unspecified ("this network") address (0.0.0.0/8)'],
    ['unspecified, "0"', 'https://0/x', 'must not target an unspecified ("this network") address (0.0.0.0/8)'],
    ['IPv6 unspecified', 'https://[::]/x', 'must not target the unspecified address (::/128)'],
    ['broadcast', 'https://255.255.255.255/x', 'must not target the broadcast address (255.255.255.255/32)'],
    ['broadcast, hex', 'https://0xffffffff/x', 'must not target the broadcast address (255.255.255.255/32)'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/x', `must not target ${MAPPED} a loopback address (127.0.0.0/8)`],
    ['IPv4-mapped loopback, hex', 'https://[::ffff:7f00:1]/x', `must not target ${MAPPED} a loopback address (127.0.0.0/8)`],
    ['IPv4-mapped metadata', 'https://[::ffff:a9fe:a9fe]/x', `must not target ${MAPPED} a link-local address (169.254.0.0/16)`],
    ['IPv4-compatible', 'https://[::127.0.0.1]/x', 'must not target a deprecated IPv4-compatible address (::/96)'],
    ['NAT64', 'https://[64:ff9b::a00:1]/x', 'must not target a NAT64 address (64:ff9b::/96) embedding a private address (10.0.0.0/8)'],
    ['6to4', 'https://[2002:a00:1::]/x', 'must not target a 6to4 address (2002::/16)'],
    ['6to4 of a public address', 'https://[2002:808:808::1]/x', 'must not target a 6to4 address (2002::/16)'],
    // WHATWG reads host evil.example and path /@127.0.0.1/; an RFC 3986 parser reads user "evil.example\\" at 127.0.0.1.
    [
      'a backslash before @',
      'https://evil.example\\@127.0.0.1/',
      'must not contain a backslash (URL parsers disagree on where the host ends)',
    ],
    [
      'a backslash in the path',
      'https://hooks.example.com\\x',
      'must not contain a backslash (URL parsers disagree on where the host ends)',
    ],
    ['port 0', 'https://hooks.example.com:0/x', 'must not use port 0'],
    ['port 0, zero-padded', 'https://hooks.example.com:000/x', 'must not use port 0'],
    ['Teredo', 'https://[2001::1]/x', 'must not target a Teredo address (2001::/32)'],
    ['ULA', 'https://[fd00::1]/x', 'must not target a unique-local address (fc00::/7)'],
  ])('refuses %s', (_case, url, message) => {
    const error = syntaxError(policy, url);
    expect(error).toBeInstanceOf(UnsafeWebhookUrlError);
    expect(error).toHaveProperty('message', message);
  });

  it('never echoes credentials in the message', () => {
    const error = syntaxError(policy, 'https://admin:s3cr3t-token@hooks.example.com/x');
    expect(error).toBeInstanceOf(UnsafeWebhookUrlError);
    expect(String((error as Error).message)).not.toMatch(/s3cr3t|admin/);
  });

  it.each([
    ['host name', 'https://hooks.example.com/x', 'https://hooks.example.com/x'],
    ['exactly 2048 characters', `https://hooks.example.com/${'a'.repeat(2048 - 26)}`, undefined],
    ['empty userinfo', 'https://@hooks.example.com/x', 'https://hooks.example.com/x'],
    ['name merely containing localhost', 'https://localhost.example.com/x', 'https://localhost.example.com/x'],
    ['name ending in localhost without a dot', 'https://notlocalhost/x', 'https://notlocalhost/x'],
    ['public IPv4', 'https://8.8.8.8/x', 'https://8.8.8.8/x'],
    ['public IPv4 with port', 'https://1.1.1.1:8443/hook', 'https://1.1.1.1:8443/hook'],
    ['public IPv4, decimal', 'https://134744072/x', 'https://8.8.8.8/x'],
    ['public IPv6', 'https://[2606:4700:4700::1111]/x', 'https://[2606:4700:4700::1111]/x'],
    ['IPv4-mapped public', 'https://[::ffff:8.8.8.8]/x', 'https://[::ffff:808:808]/x'],
    ['NAT64 of a public address', 'https://[64:ff9b::8.8.8.8]/x', 'https://[64:ff9b::808:808]/x'],
  ])('accepts %s', (_case, url, href) => {
    expect(policy.checkSyntax(url).href).toBe(href ?? url);
  });
});

describe('WebhookUrlPolicy allow-list', () => {
  const loopbackV4 = new WebhookUrlPolicy({ resolver: noDns, allowedCidrs: ['127.0.0.0/8'] });

  it.each([
    ['IPv4 loopback with port', 'https://127.0.0.1:8443/hook'],
    ['another loopback address', 'https://127.0.0.2/hook'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
    ['decimal loopback', 'https://2130706433/hook'],
  ])('lets %s pass both checks', async (_case, url) => {
    expect(loopbackV4.checkSyntax(url)).toBeInstanceOf(URL);
    await expect(loopbackV4.assertSafeToSave(url)).resolves.toBeInstanceOf(URL);
  });

  it.each([
    ['private address', 'https://10.0.0.1/hook', 'must not target a private address (10.0.0.0/8)'],
    ['IPv6 loopback', 'https://[::1]/hook', 'must not target a loopback address (::1/128)'],
    ['localhost, which also means ::1', 'https://localhost/hook', 'must not target a loopback address (::1/128)'],
  ])('still refuses %s', (_case, url, message) => {
    expect(() => loopbackV4.checkSyntax(url)).toThrow(message);
  });

  it.each([
    ['a string list', ['127.0.0.0/8, ::1/128']],
    ['a CidrList', parseCidrList(['127.0.0.1', '::1'])],
  ])('accepts localhost once both loopback addresses are allow-listed, as %s', (_form, allowedCidrs) => {
    const policy = new WebhookUrlPolicy({ resolver: noDns, allowedCidrs });
    expect(policy.checkSyntax('https://localhost:8443/hook').port).toBe('8443');
  });

  it('rejects a bad allow-list entry at construction, naming it', () => {
    expect(() => new WebhookUrlPolicy({ allowedCidrs: ['127.0.0.0/8', 'localhost'] })).toThrow('Invalid CIDR "localhost"');
  });
});

describe('WebhookUrlPolicy.assertAddressAllowed', () => {
  const policy = new WebhookUrlPolicy({ resolver: noDns, allowedCidrs: ['fd00:1::/32'] });

  it.each([
    ['127.0.0.1', 'must not target a loopback address (127.0.0.0/8)'],
    ['::ffff:10.1.1.1', `must not target ${MAPPED} a private address (10.0.0.0/8)`],
    ['fd00:2::1', 'must not target a unique-local address (fc00::/7)'],
    // Node would refuse to connect to these spellings, so they are never approved.
    ['127.1', 'must not target an unrecognised address (neither IPv4 nor IPv6)'],
    ['0x08.0x08.0x08.0x08', 'must not target an unrecognised address (neither IPv4 nor IPv6)'],
  ])('refuses %s', (address, message) => {
    expect(() => policy.assertAddressAllowed(address)).toThrow(new UnsafeWebhookUrlError(message));
  });

  it.each([['8.8.8.8'], ['2606:4700:4700::1111'], ['fd00:1::5']])('allows %s', (address) => {
    expect(() => policy.assertAddressAllowed(address)).not.toThrow();
  });
});

describe('WebhookUrlPolicy.assertSafeToSave', () => {
  it('accepts a name resolving to a public address, asking the resolver for the URL host', async () => {
    const resolver = resolvingTo(PUBLIC_IPV4, '2606:2800:21f:cb07:6820:80da:af6b:8b2c');
    const url = await new WebhookUrlPolicy({ resolver }).assertSafeToSave('https://hooks.example.com/x?event=1');
    expect(url.href).toBe('https://hooks.example.com/x?event=1');
    expect(resolver.calls).toEqual(['hooks.example.com']);
  });

  it.each([
    ['public then private', [PUBLIC_IPV4, '10.0.0.7'], NOT_PUBLIC],
    ['loopback', ['127.0.0.1'], NOT_PUBLIC],
    ['IPv6 loopback', ['::1'], NOT_PUBLIC],
    ['cloud metadata', ['169.254.169.254'], NOT_PUBLIC],
    ['IPv4-mapped private', ['::ffff:10.0.0.1'], NOT_PUBLIC],
    ['public IPv6 then ULA', ['2606:4700:4700::1111', 'fd00::1'], NOT_PUBLIC],
    ['CGNAT', ['100.100.100.100'], NOT_PUBLIC],
    ['garbage', ['not-an-ip'], NOT_PUBLIC],
  ])('refuses a name resolving to %s, without saying which range (internal DNS stays internal)', async (_case, answers, message) => {
    const policy = new WebhookUrlPolicy({ resolver: resolvingTo(...answers) });
    await expect(policy.assertSafeToSave('https://hooks.example.com/x')).rejects.toThrow(new UnsafeWebhookUrlError(message));
  });

  it.each([['ENOTFOUND'], ['ENODATA'], ['EAI_NONAME']])(
    'accepts a name that does not exist or has no address (%s): the connect-time lookup still protects',
    async (code) => {
      const resolver = failingWith(dnsError(code));
      const url = await new WebhookUrlPolicy({ resolver }).assertSafeToSave('https://hooks.example.com/x');
      expect(url.hostname).toBe('hooks.example.com');
      expect(resolver.calls).toEqual(['hooks.example.com']);
    },
  );

  it.each([['EAI_AGAIN'], ['ESERVFAIL'], ['ETIMEOUT'], ['EREFUSED']])(
    'refuses a name the DNS gave no answer for (%s), saying to try again',
    async (code) => {
      const policy = new WebhookUrlPolicy({ resolver: failingWith(dnsError(code)) });
      await expect(policy.assertSafeToSave('https://hooks.example.com/x')).rejects.toThrow(
        new UnsafeWebhookUrlError('must have a host name that resolves within 2 s (no DNS answer in time); try again later'),
      );
    },
  );

  it('refuses, at the save deadline, a name an injected resolver never answers', async () => {
    const policy = new WebhookUrlPolicy({ resolver: () => new Promise<string[]>(() => undefined), hostResolution: { saveTimeoutMs: 50 } });
    await expect(policy.assertSafeToSave('https://hooks.example.com/x')).rejects.toThrow(
      'must have a host name that resolves within 50 ms (no DNS answer in time); try again later',
    );
  });

  it('accepts a name with no answers', async () => {
    await expect(new WebhookUrlPolicy({ resolver: resolvingTo() }).assertSafeToSave('https://hooks.example.com/x')).resolves.toBeInstanceOf(
      URL,
    );
  });

  it('lets an unexpected resolver failure through instead of treating it as "does not resolve"', async () => {
    const bug = new TypeError('resolver bug');
    const policy = new WebhookUrlPolicy({ resolver: () => Promise.reject(bug) });
    await expect(policy.assertSafeToSave('https://hooks.example.com/x')).rejects.toBe(bug);
  });

  it.each([
    ['an IP literal', 'https://8.8.8.8/x'],
    ['a refused IP literal', 'https://10.0.0.1/x'],
    ['localhost', 'https://localhost/x'],
    ['an http URL', 'http://hooks.example.com/x'],
  ])('does not query DNS for %s', async (_case, url) => {
    const resolver = resolvingTo(PUBLIC_IPV4);
    await new WebhookUrlPolicy({ resolver }).assertSafeToSave(url).catch((error: unknown) => {
      expect(error).toBeInstanceOf(UnsafeWebhookUrlError);
    });
    expect(resolver.calls).toEqual([]);
  });

  it('runs the static checks first', async () => {
    const resolver = resolvingTo(PUBLIC_IPV4);
    await expect(new WebhookUrlPolicy({ resolver }).assertSafeToSave('https://u:p@hooks.example.com/')).rejects.toThrow(
      'must not contain credentials (user:password@)',
    );
    expect(resolver.calls).toEqual([]);
  });
});
