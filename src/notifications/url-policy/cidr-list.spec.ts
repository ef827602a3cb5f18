import { parseCidrList } from './address-policy';

describe('parseCidrList', () => {
  it.each([
    ['comma-separated string', '127.0.0.0/8, ::1/128'],
    ['whitespace-separated string', '127.0.0.0/8 ::1/128'],
    ['array', ['127.0.0.0/8', '::1/128']],
    ['array with padded entries', [' 127.0.0.0/8 ', '::1/128,']],
  ])('parses a %s', (_form, cidrs) => {
    const list = parseCidrList(cidrs);
    expect(list.isEmpty).toBe(false);
    expect(list.toString()).toBe('127.0.0.0/8, ::1/128');
  });

  it.each([[''], [[]], [[' ', ',']]])('gives an empty list for %j', (cidrs) => {
    const list = parseCidrList(cidrs);
    expect(list.isEmpty).toBe(true);
    expect(list.contains('127.0.0.1')).toBe(false);
  });

  it.each([
    ['ambiguous short IPv4', '10/8'],
    ['three-part IPv4', '127.0.1/24'],
    ['octal IPv4', '0177.0.0.1/32'],
    ['prefix too long for IPv4', '10.0.0.0/33'],
    ['prefix too long for IPv6', '::1/129'],
    ['empty prefix', '10.0.0.0/'],
    ['two prefixes', '10.0.0.0/8/9'],
    ['negative prefix', '10.0.0.0/-1'],
    ['host name', 'localhost'],
    ['IPv6 with a zone', 'fe80::1%eth0/64'],
    ['out-of-range octet', '256.0.0.0/8'],
  ])('rejects a %s and names the entry', (_problem, entry) => {
    expect(() => parseCidrList(['127.0.0.0/8', entry])).toThrow(`Invalid CIDR "${entry}"`);
  });

  it.each([
    ['IPv4 inside', '127.0.0.0/8', '127.9.9.9', true],
    ['IPv4 outside', '127.0.0.0/8', '128.0.0.1', false],
    ['bare IPv4 is one host', '10.0.0.5', '10.0.0.5', true],
    ['bare IPv4 excludes its neighbour', '10.0.0.5', '10.0.0.6', false],
    ['IPv6 inside', 'fd00::/8', 'fd12::1', true],
    ['IPv6 outside', '::1/128', '::2', false],
    ['IPv4-mapped address in an IPv4 range', '127.0.0.0/8', '::ffff:127.0.0.1', true],
    ['IPv4-mapped hex address in an IPv4 range', '127.0.0.0/8', '::ffff:7f00:1', true],
    ['IPv4 address in an IPv4-mapped range', '::ffff:127.0.0.0/104', '127.0.0.1', true],
    ['IPv4 address not in an IPv4-mapped range', '::ffff:127.0.0.0/104', '10.0.0.1', false],
    ['IPv4-mapped address in an IPv6 range', '::ffff:0:0/96', '::ffff:10.0.0.1', true],
    ['IPv4-compatible is not IPv4-mapped', '127.0.0.0/8', '::127.0.0.1', false],
    ['IPv4 never matches an IPv6 range', '::/0', '127.0.0.1', false],
    ['not an address', '0.0.0.0/0', 'example.com', false],
  ])('%s: %s contains %s -> %s', (_case, cidr, address, expected) => {
    expect(parseCidrList(cidr).contains(address)).toBe(expected);
  });
});
