import ipaddr from 'ipaddr.js';

export interface SpecialRange<T extends ipaddr.IPv4 | ipaddr.IPv6> {
  readonly network: [T, number];
  /** e.g. "a loopback address (127.0.0.0/8)" */
  readonly reason: string;
}

export interface Ipv6SpecialRange extends SpecialRange<ipaddr.IPv6> {
  /** Set for ranges whose addresses stand for an IPv4 address: they are as reachable as that address. */
  readonly embeddedIpv4?: (address: ipaddr.IPv6) => ipaddr.IPv4;
}

const ipv4 = (cidr: string, description: string): SpecialRange<ipaddr.IPv4> => ({
  network: ipaddr.IPv4.parseCIDR(cidr),
  reason: `${description} (${cidr})`,
});

const ipv6 = (cidr: string, description: string, embeddedIpv4?: Ipv6SpecialRange['embeddedIpv4']): Ipv6SpecialRange => ({
  network: ipaddr.IPv6.parseCIDR(cidr),
  reason: `${description} (${cidr})`,
  embeddedIpv4,
});

const ipv4FromBytes = (bytes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(bytes);

/** IANA IPv4 special-purpose registry; first match wins, so narrower ranges come first. */
export const IPV4_SPECIAL_RANGES: readonly SpecialRange<ipaddr.IPv4>[] = [
  ipv4('0.0.0.0/8', 'an unspecified ("this network") address'),
  ipv4('10.0.0.0/8', 'a private address'),
  ipv4('172.16.0.0/12', 'a private address'),
  ipv4('192.168.0.0/16', 'a private address'),
  ipv4('100.64.0.0/10', 'a carrier-grade NAT shared address'),
  ipv4('127.0.0.0/8', 'a loopback address'),
  ipv4('169.254.0.0/16', 'a link-local address'),
  ipv4('192.0.0.0/24', 'an IETF protocol assignment address'),
  ipv4('192.0.2.0/24', 'a documentation address'),
  ipv4('198.51.100.0/24', 'a documentation address'),
  ipv4('203.0.113.0/24', 'a documentation address'),
  ipv4('198.18.0.0/15', 'a benchmarking address'),
  ipv4('192.88.99.0/24', 'a 6to4 relay anycast address'),
  ipv4('224.0.0.0/4', 'a multicast address'),
  ipv4('255.255.255.255/32', 'the broadcast address'),
  ipv4('240.0.0.0/4', 'a reserved address'),
];

/** IANA IPv6 special-purpose registry; first match wins, so narrower ranges come first. */
export const IPV6_SPECIAL_RANGES: readonly Ipv6SpecialRange[] = [
  ipv6('::/128', 'the unspecified address'),
  ipv6('::1/128', 'a loopback address'),
  ipv6('::ffff:0:0/96', 'an IPv4-mapped address', (address) => address.toIPv4Address()),
  ipv6('::/96', 'a deprecated IPv4-compatible address'),
  ipv6('64:ff9b::/96', 'a NAT64 address', (address) => ipv4FromBytes(address.toByteArray().slice(12, 16))),
  ipv6('64:ff9b:1::/48', 'a local-use NAT64 address'),
  ipv6('100::/64', 'a discard-only address'),
  ipv6('2001::/32', 'a Teredo address'),
  ipv6('2001:2::/48', 'a benchmarking address'),
  ipv6('2001:10::/28', 'an ORCHID address'),
  // The rest of the IETF block is anycast infrastructure (AMT, AS112, ORCHIDv2...), never a webhook receiver.
  ipv6('2001::/23', 'an IETF protocol assignment address'),
  ipv6('2001:db8::/32', 'a documentation address'),
  ipv6('3fff::/20', 'a documentation address'),
  // Refused whatever IPv4 address it embeds: the 6to4 relay path is deprecated (RFC 7526) and its relays are anycast.
  ipv6('2002::/16', 'a 6to4 address'),
  ipv6('fc00::/7', 'a unique-local address'),
  ipv6('fe80::/10', 'a link-local address'),
  ipv6('fec0::/10', 'a deprecated site-local address'),
  ipv6('ff00::/8', 'a multicast address'),
];

export const IPV6_GLOBAL_UNICAST = ipv6('2000::/3', 'an address outside the global unicast range');
