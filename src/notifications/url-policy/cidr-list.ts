import ipaddr from 'ipaddr.js';
import { type IpAddress, parseIpAddress, unmapIpv4 } from './ip-address';
import { IPV4_SPECIAL_RANGES, IPV6_GLOBAL_UNICAST, IPV6_SPECIAL_RANGES } from './special-address-ranges';

type Network = [IpAddress, number];

const ENTRY = /^([^/]+)(?:\/(\d{1,3}))?$/;

export class CidrList {
  readonly isEmpty: boolean;

  private constructor(private readonly networks: readonly Network[]) {
    this.isEmpty = networks.length === 0;
  }

  static parse(cidrs: readonly string[] | string): CidrList {
    const entries = (typeof cidrs === 'string' ? [cidrs] : cidrs).flatMap((chunk) => chunk.split(/[\s,]+/)).filter((entry) => entry !== '');
    return new CidrList(entries.map(parseNetwork));
  }

  /** An IPv4-mapped IPv6 address is also looked up as the IPv4 address it stands for. */
  contains(address: string): boolean {
    const parsed = parseIpAddress(address);
    if (parsed === null) return false;
    const unmapped = unmapIpv4(parsed);
    return this.networks.some((network) => matches(parsed, network) || matches(unmapped, network));
  }

  /**
   * The entries that reach some address that is not globally routable unicast (private, loopback, link-local,
   * reserved…), each with the first such range it overlaps: "0.0.0.0/0 overlaps a private address (10.0.0.0/8)".
   */
  nonGlobalOverlaps(): string[] {
    return this.networks.flatMap((network) => {
      const reason = nonGlobalOverlapOf(network);
      return reason === null ? [] : [`${format(network)} overlaps ${reason}`];
    });
  }

  toString(): string {
    return this.networks.map(format).join(', ');
  }
}

const format = ([address, prefix]: Network): string => `${address.toString()}/${prefix}`;

// Two networks overlap when they agree on the bits of the shorter prefix.
function overlaps([address, prefix]: Network, [other, otherPrefix]: Network): boolean {
  return address.kind() === other.kind() && address.match(other, Math.min(prefix, otherPrefix));
}

function nonGlobalOverlapOf(network: Network): string | null {
  if (network[0].kind() === 'ipv4') return IPV4_SPECIAL_RANGES.find((range) => overlaps(network, range.network))?.reason ?? null;
  const special = IPV6_SPECIAL_RANGES.find((range) => overlaps(network, range.network));
  if (special !== undefined) return special.reason;
  const [address, prefix] = network;
  const insideGlobalUnicast = prefix >= IPV6_GLOBAL_UNICAST.network[1] && address.match(IPV6_GLOBAL_UNICAST.network);
  return insideGlobalUnicast ? null : 'addresses outside the global unicast range (2000::/3)';
}

/** Parses "127.0.0.0/8, ::1/128" style lists (commas and/or whitespace); a bare address means a single host. */
export function parseCidrList(cidrs: readonly string[] | string): CidrList {
  return CidrList.parse(cidrs);
}

function parseNetwork(entry: string): Network {
  const invalid = () => new Error(`Invalid CIDR "${entry}": expected an address/prefix such as 127.0.0.0/8 or ::1/128`);
  const [, addressText, prefixText] = ENTRY.exec(entry) ?? [];
  if (addressText === undefined) throw invalid();
  // ipaddr.js would read "10/8" as 0.0.0.10/8; allow-list entries must be unambiguous.
  const isIpv6 = addressText.includes(':');
  if (isIpv6 ? addressText.includes('%') : !ipaddr.IPv4.isValidFourPartDecimal(addressText)) throw invalid();
  const address = parseIpAddress(addressText);
  if (address === null) throw invalid();
  const maxPrefix = address.kind() === 'ipv4' ? 32 : 128;
  const prefix = prefixText === undefined ? maxPrefix : Number(prefixText);
  if (prefix > maxPrefix) throw invalid();
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && prefix >= 96) {
    return [address.toIPv4Address(), prefix - 96];
  }
  return [address, prefix];
}

function matches(address: IpAddress, [network, prefix]: Network): boolean {
  return address.kind() === network.kind() && address.match(network, prefix);
}
