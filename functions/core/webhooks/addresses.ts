/**
 * Where a webhook may be sent (docs/webhooks.md, "Delivery"): the classifier of IP addresses that keeps deliveries
 * away from the service's own network (private, loopback, link-local, carrier-grade NAT, unique-local, metadata…),
 * and the rules of a webhook URL. The same rules serve the create-time check of a URL and the sender's check of every
 * address a host resolves to at connect time.
 */
import ipaddr from 'ipaddr.js';

/** What kind of address an IP address is, for a delivery: only `public` may be connected to. */
export type AddressKind =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'metadata'
  | 'carrier-grade NAT'
  | 'unique-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'invalid';

/** The cloud instance metadata addresses (AWS's IPv4 and IPv6 endpoints, ECS's task metadata). */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254']);

const IPV4_KINDS: Readonly<Record<string, AddressKind>> = {
  unicast: 'public',
  as112: 'public',
  amt: 'public',
  private: 'private',
  loopback: 'loopback',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
};

const IPV6_KINDS: Readonly<Record<string, AddressKind>> = {
  unicast: 'public',
  as112v6: 'public',
  amt: 'public',
  loopback: 'loopback',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'unique-local',
  unspecified: 'unspecified',
  multicast: 'multicast',
};

/** An address as written in a URL or a resolver's answer: without the brackets of a URL's IPv6 host or a zone id. */
function bare(address: string): string {
  const unbracketed = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const zone = unbracketed.indexOf('%');
  return zone === -1 ? unbracketed : unbracketed.slice(0, zone);
}

/** The IPv4 address in an IPv6 address's last 32 bits. */
function lastIpv4Of(address: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = address.toByteArray();
  return new ipaddr.IPv4(bytes.slice(12, 16));
}

/**
 * The IPv4 address an IPv6 address stands for, when it embeds one that decides where packets go: IPv4-mapped
 * (::ffff:a.b.c.d), its RFC 6145 form (::ffff:0:a.b.c.d), well-known NAT64 (64:ff9b::a.b.c.d), IPv4-compatible
 * (::a.b.c.d) and 6to4 (2002:aabb:ccdd::…).
 */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = address.range();
  if (range === 'ipv4Mapped') return address.toIPv4Address();
  if (range === 'rfc6145') return lastIpv4Of(address);
  if (address.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return lastIpv4Of(address);
  if (range === '6to4') return new ipaddr.IPv4(address.toByteArray().slice(2, 6));
  const parts = address.parts;
  const compatible = parts.slice(0, 6).every((part) => part === 0) && (parts[6] ?? 0) !== 0;
  return compatible ? lastIpv4Of(address) : undefined;
}

function ipv4Kind(address: ipaddr.IPv4): AddressKind {
  if (METADATA_ADDRESSES.has(address.toString())) return 'metadata';
  return IPV4_KINDS[address.range()] ?? 'reserved';
}

/** An address's kind, and the IPv4 address that decided it when an IPv6 address embeds one. */
function classify(address: string): { kind: AddressKind; embedded?: string } {
  const text = bare(address);
  if (!ipaddr.isValid(text)) return { kind: 'invalid' };
  const parsed = ipaddr.parse(text);
  if (parsed.kind() === 'ipv4') return { kind: ipv4Kind(parsed as ipaddr.IPv4) };
  const v6 = parsed as ipaddr.IPv6;
  if (METADATA_ADDRESSES.has(v6.toString())) return { kind: 'metadata' };
  const range = v6.range();
  if (range === 'unspecified' || range === 'loopback') return { kind: IPV6_KINDS[range] ?? 'reserved' };
  const embedded = embeddedIpv4(v6);
  if (embedded !== undefined) return { kind: ipv4Kind(embedded), embedded: embedded.toString() };
  return { kind: IPV6_KINDS[range] ?? 'reserved' };
}

/**
 * What kind of address `address` is (IPv4 or IPv6, with or without brackets or a zone id). An IPv6 address that
 * embeds an IPv4 address is that IPv4 address's kind; a local-use NAT64 (64:ff9b:1::/48), Teredo, documentation,
 * benchmarking or other special range is `reserved`. Text that is no IP address is `invalid`.
 */
export function classifyAddress(address: string): AddressKind {
  return classify(address).kind;
}

const KIND_TEXT: Readonly<Record<Exclude<AddressKind, 'public'>, string>> = {
  private: 'a private address',
  loopback: 'a loopback address',
  'link-local': 'a link-local address',
  metadata: 'a link-local/metadata address',
  'carrier-grade NAT': 'a carrier-grade NAT address',
  'unique-local': 'a unique-local address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
  invalid: 'not an IP address',
};

/**
 * Why a delivery may not connect to `address`, for a person ("refused: 169.254.169.254 is a link-local/metadata
 * address"), or undefined when it may: a public address, or a loopback one when `loopbackAllowed` (the URL's host is
 * one WEBHOOK_ALLOWED_HTTP_HOSTS names).
 */
export function addressRefusal(address: string, loopbackAllowed: boolean): string | undefined {
  const { kind, embedded } = classify(address);
  if (kind === 'public' || (kind === 'loopback' && loopbackAllowed)) return undefined;
  const shown = embedded === undefined ? bare(address) : `${bare(address)} (IPv4 ${embedded})`;
  return `refused: ${shown} is ${KIND_TEXT[kind]}`;
}

/** The hosts of WEBHOOK_ALLOWED_HTTP_HOSTS (comma-separated, e.g. `127.0.0.1,localhost`), lowercase, unbracketed. */
export function parseAllowedHttpHosts(setting: string | undefined): string[] {
  return (setting ?? '')
    .split(',')
    .map((host) => bare(host.trim().toLowerCase()))
    .filter((host) => host !== '');
}

/** Whether a URL's `hostname` (as URL parses it: lowercase, IPv6 in brackets) is one of `allowedHttpHosts`. */
export function isAllowedHttpHost(hostname: string, allowedHttpHosts: readonly string[]): boolean {
  return allowedHttpHosts.includes(bare(hostname.toLowerCase()));
}

/**
 * Whether a URL's `hostname` may reach loopback: `localhost` or an IP literal, when WEBHOOK_ALLOWED_HTTP_HOSTS names
 * it. Any other allowed name may use http but not loopback, so that a name whose DNS its owner points at 127.0.0.1 never
 * reaches what listens on the service's own host (on AWS, the Lambda runtime API).
 */
export function isLoopbackAllowed(hostname: string, allowedHttpHosts: readonly string[]): boolean {
  return isAllowedHttpHost(hostname, allowedHttpHosts) && (bare(hostname.toLowerCase()) === 'localhost' || isIpLiteral(hostname));
}

/** Whether `hostname` (as URL parses it) is an IP address literal rather than a name to resolve. */
export function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(bare(hostname)) && (hostname.startsWith('[') || ipaddr.IPv4.isValidFourPartDecimal(hostname));
}

/**
 * Why `url` cannot be a webhook's URL, for a person, or undefined when it can: it must be an absolute `https` URL
 * (or `http` when its host is one of `allowedHttpHosts`), carry no user name or password, and, when its host is an
 * IP address, that address must be public (or loopback for an allowed host). A host name is checked again at every
 * delivery, against each address it resolves to then.
 */
export function webhookUrlProblem(url: string, allowedHttpHosts: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not an absolute URL: give one such as https://example.com/hooks';
  }
  const allowed = isAllowedHttpHost(parsed.hostname, allowedHttpHosts);
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && allowed)) {
    return parsed.protocol === 'http:'
      ? `must use https: http is accepted only for the hosts WEBHOOK_ALLOWED_HTTP_HOSTS names (${allowedHttpHosts.join(', ') || 'none'})`
      : 'must use https';
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return 'must not carry a user name or password: authenticate the deliveries by their signature';
  }
  if (isIpLiteral(parsed.hostname)) return addressRefusal(parsed.hostname, allowed);
  return undefined;
}
