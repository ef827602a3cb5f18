import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

// ipaddr.js reads the deprecated IPv4-compatible spelling "::a.b.c.d" as IPv4-mapped "::ffff:a.b.c.d", which would
// make "::8.8.8.8" look like a mapped global address; a mapped address always spells out "ffff" before the IPv4 part.
const IPV4_COMPATIBLE_SPELLING = /^::[^:]*$/;

/** Parses any textual form ipaddr.js accepts; null when it is not an IP address. */
export function parseIpAddress(text: string): IpAddress | null {
  let address: IpAddress;
  try {
    address = ipaddr.parse(text);
  } catch {
    return null;
  }
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && IPV4_COMPATIBLE_SPELLING.test(text)) {
    const [, , , , , , high, low] = address.parts;
    const compatible = new ipaddr.IPv6([0, 0, 0, 0, 0, 0, high, low]);
    if (address.zoneId !== undefined) compatible.zoneId = address.zoneId;
    return compatible;
  }
  return address;
}

/** The IPv4 address an IPv4-mapped IPv6 address stands for; other addresses unchanged. */
export function unmapIpv4(address: IpAddress): IpAddress {
  return address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}
