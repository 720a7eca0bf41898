/**
 * Which IP addresses the engine may connect to when it fetches a URL that a
 * partner typed in (server-side request forgery, OWASP API7): public
 * internet unicast only. Loopback, private, link-local, carrier-grade NAT,
 * multicast, unspecified, reserved, documentation, benchmarking and cloud
 * metadata addresses are refused, for IPv4, IPv6, and the IPv6 forms that
 * carry an IPv4 address (mapped, NAT64, 6to4: the IPv4 inside is classified;
 * Teredo and the deprecated IPv4-compatible form are refused outright).
 *
 * The classification stands on ipaddr.js (2.x): its range() names the special
 * ranges of both families from the IANA registries (RFC 6890 and later), it
 * parses the mapped and embedded IPv6 forms, it is tiny, has no dependencies
 * and is widely used (express and proxy-addr depend on it). What it does not
 * name on its own (the documentation and benchmarking blocks inside its
 * "reserved", the cloud metadata addresses, the IPv4 inside NAT64 and 6to4
 * addresses, IPv6 outside global unicast 2000::/3) is added here.
 */
import { isIP } from "node:net"
import ipaddr from "ipaddr.js"

export type AddressVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly range: string }

export interface AddressPolicyOptions {
  /**
   * Lets loopback, private (RFC 1918), carrier-grade NAT (100.64.0.0/10) and
   * unique-local IPv6 (fc00::/7) addresses through, for tests and private
   * deployments. Link-local, cloud metadata, unspecified, multicast,
   * broadcast, reserved and documentation addresses stay refused.
   */
  readonly allowPrivate?: boolean
}

const allowed: AddressVerdict = { allowed: true }
const refused = (range: string): AddressVerdict => ({ allowed: false, range })

type Cidr = readonly [ipaddr.IPv4 | ipaddr.IPv6, number]
const cidr = (text: string): Cidr => ipaddr.parseCIDR(text)
const within = (address: ipaddr.IPv4 | ipaddr.IPv6, ranges: ReadonlyArray<Cidr>) =>
  ranges.some(
    ([network, bits]) => address.kind() === network.kind() && address.match(network, bits)
  )

// Cloud metadata services: refused even with allowPrivate. 169.254.169.254 (AWS, GCP, Azure,
// OpenStack...) and 169.254.170.2 (AWS ECS task metadata) are link-local; 100.100.100.200
// (Alibaba) is carrier-grade NAT; 192.0.0.192 (Oracle) is in 192.0.0.0/24; fd00:ec2::254 (AWS
// over IPv6) is unique-local.
const metadata: ReadonlyArray<Cidr> = [
  cidr("169.254.169.254/32"),
  cidr("169.254.170.2/32"),
  cidr("100.100.100.200/32"),
  cidr("192.0.0.192/32"),
  cidr("fd00:ec2::254/128")
]

// Inside ipaddr.js's "reserved": the names a message should say.
const documentation: ReadonlyArray<Cidr> = [
  cidr("192.0.2.0/24"),
  cidr("198.51.100.0/24"),
  cidr("203.0.113.0/24"),
  cidr("2001:db8::/32"),
  cidr("3fff::/20")
]
const benchmarking: ReadonlyArray<Cidr> = [cidr("198.18.0.0/15"), cidr("2001:2::/48")]
const protocolAssignments: ReadonlyArray<Cidr> = [cidr("192.0.0.0/24"), cidr("2001::/23")]

// IPv6 global unicast: everything outside it is reserved by the IETF (RFC 4291), apart from
// the special ranges ipaddr.js names.
const globalUnicast6 = cidr("2000::/3")
// The NAT64 well-known prefix carries an IPv4 address in its last 32 bits (RFC 6052); the
// local-use prefix 64:ff9b:1::/48 (RFC 8215) is for networks of their own and is refused.
const nat64WellKnown = cidr("64:ff9b::/96")
// The deprecated IPv4-compatible form ::a.b.c.d (RFC 4291 2.5.5.1).
const ipv4Compatible = cidr("::/96")

const v4Names: Readonly<Record<string, string>> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  carrierGradeNat: "carrier-grade NAT",
  private: "private",
  reserved: "reserved",
  as112: "AS112 DNS sink",
  amt: "AMT relay anycast"
}

const v6Names: Readonly<Record<string, string>> = {
  unspecified: "unspecified",
  loopback: "loopback",
  linkLocal: "link-local",
  multicast: "multicast",
  uniqueLocal: "unique-local",
  deprecatedSiteLocal: "site-local",
  discard: "discard-only",
  rfc6145: "IPv4-translated",
  rfc6052: "local-use NAT64",
  teredo: "Teredo tunnelling",
  benchmarking: "benchmarking",
  amt: "AMT relay anycast",
  as112v6: "AS112 DNS sink",
  deprecatedOrchid: "ORCHID",
  orchid2: "ORCHID",
  droneRemoteIdProtocolEntityTags: "drone remote ID",
  segmentRouting: "segment routing",
  reserved: "reserved"
}

const privateV4 = new Set(["loopback", "private", "carrierGradeNat"])
const privateV6 = new Set(["loopback", "uniqueLocal"])

/** What to call `address` where its ipaddr.js `range` is too coarse (or metadata). */
const namedRange = (address: ipaddr.IPv4 | ipaddr.IPv6, range: string): string | undefined => {
  if (within(address, metadata)) return "cloud metadata"
  if (range !== "reserved") return undefined
  if (within(address, documentation)) return "documentation"
  if (within(address, benchmarking)) return "benchmarking"
  if (within(address, protocolAssignments)) return "IETF protocol assignment"
  return undefined
}

const classifyV4 = (address: ipaddr.IPv4, allowPrivate: boolean): AddressVerdict => {
  const range = address.range()
  if (range === "unicast") return allowed
  const named = namedRange(address, range)
  if (named === undefined && allowPrivate && privateV4.has(range)) return allowed
  return refused(named ?? v4Names[range] ?? range)
}

/** The IPv4 address in bits `from`..`from + 32` of an IPv6 address. */
const embeddedV4 = (address: ipaddr.IPv6, fromPart: number) => {
  const high = address.parts[fromPart] ?? 0
  const low = address.parts[fromPart + 1] ?? 0
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
}

/** An IPv6 address that carries an IPv4 one is what its IPv4 address is. */
const classifyEmbedded = (
  form: string,
  inner: ipaddr.IPv4,
  allowPrivate: boolean
): AddressVerdict => {
  const verdict = classifyV4(inner, allowPrivate)
  return verdict.allowed ? verdict : refused(`${form} ${verdict.range}`)
}

const classifyV6 = (address: ipaddr.IPv6, allowPrivate: boolean): AddressVerdict => {
  const range = address.range()
  if (range === "ipv4Mapped")
    return classifyEmbedded("IPv4-mapped", embeddedV4(address, 6), allowPrivate)
  if (address.match(...nat64WellKnown))
    return classifyEmbedded("NAT64", embeddedV4(address, 6), allowPrivate)
  if (range === "6to4") return classifyEmbedded("6to4", embeddedV4(address, 1), allowPrivate)
  // Teredo (2001::/32) hides its IPv4 addresses (one of them obfuscated): refused outright.
  if (range === "teredo") return refused("Teredo tunnelling")
  if (range === "unicast") {
    if (address.match(...globalUnicast6)) return allowed
    if (address.match(...ipv4Compatible)) return refused("deprecated IPv4-compatible")
    return refused("reserved")
  }
  const named = namedRange(address, range)
  if (named === undefined && allowPrivate && privateV6.has(range)) return allowed
  return refused(named ?? v6Names[range] ?? range)
}

/** Classifies one IP address (v4 or v6 text). */
export const classifyAddress = (
  address: string,
  options?: AddressPolicyOptions
): AddressVerdict => {
  const allowPrivate = options?.allowPrivate === true
  // node:net's grammar is the one the connection will use; ipaddr.js also reads the legacy
  // IPv4 forms ("127.1", "0x7f.0.0.1") that no resolver answers with: refuse what net refuses.
  const family = isIP(address)
  if (family === 0) return refused("invalid")
  // A zone index ("fe80::1%eth0") scopes the address to an interface: never a public one.
  if (address.includes("%")) return refused("interface-scoped")
  const parsed = ipaddr.parse(address)
  return parsed.kind() === "ipv4"
    ? classifyV4(parsed as ipaddr.IPv4, allowPrivate)
    : classifyV6(parsed as ipaddr.IPv6, allowPrivate)
}

/** "a loopback address", "an unspecified address": for messages. */
export const describeRange = (range: string): string =>
  `${/^[aeiou]/i.test(range) && !range.startsWith("uni") ? "an" : "a"} ${range} address`
