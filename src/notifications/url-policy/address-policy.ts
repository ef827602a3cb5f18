import ipaddr from 'ipaddr.js';
import { parseIpAddress } from './ip-address';
import { IPV4_SPECIAL_RANGES, IPV6_GLOBAL_UNICAST, IPV6_SPECIAL_RANGES } from './special-address-ranges';

export { CidrList, parseCidrList } from './cidr-list';

/**
 * Returns null when the address is globally routable unicast, else a short reason such as
 * "a loopback address (127.0.0.0/8)". Accepts any IPv4/IPv6 textual form ipaddr.js parses.
 */
export function describeNonGlobalAddress(address: string): string | null {
  const parsed = parseIpAddress(address);
  if (parsed === null) return 'an unrecognised address (neither IPv4 nor IPv6)';
  return parsed instanceof ipaddr.IPv4 ? describeIpv4(parsed) : describeIpv6(parsed);
}

function describeIpv4(address: ipaddr.IPv4): string | null {
  return IPV4_SPECIAL_RANGES.find(({ network }) => address.match(network))?.reason ?? null;
}

function describeIpv6(address: ipaddr.IPv6): string | null {
  const range = IPV6_SPECIAL_RANGES.find(({ network }) => address.match(network));
  if (range === undefined) return address.match(IPV6_GLOBAL_UNICAST.network) ? null : IPV6_GLOBAL_UNICAST.reason;
  if (range.embeddedIpv4 === undefined) return range.reason;
  const embedded = describeIpv4(range.embeddedIpv4(address));
  return embedded === null ? null : `${range.reason} embedding ${embedded}`;
}
