import { describe, expect, it } from "vitest"
import { classifyAddress, describeRange } from "./AddressPolicy.js"

const rangeOf = (address: string, allowPrivate = false) => {
  const verdict = classifyAddress(address, { allowPrivate })
  return verdict.allowed ? "allowed" : verdict.range
}

describe("classifyAddress", () => {
  it.each([
    ["8.8.8.8"],
    ["1.1.1.1"],
    ["93.184.215.14"],
    ["2606:4700:4700::1111"],
    ["2001:4860:4860::8888"],
    ["2a00:1450:4001:80b::200e"],
    // The IPv6 forms that carry a public IPv4 address are what that address is.
    ["::ffff:8.8.8.8"],
    ["64:ff9b::808:808"],
    ["2002:808:808::1"]
  ])("allows the public address %s", (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true })
  })

  it.each([
    // IPv4
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.5", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.0.1", "link-local"],
    ["169.254.169.254", "cloud metadata"],
    ["169.254.170.2", "cloud metadata"],
    ["100.100.100.200", "cloud metadata"],
    ["100.64.0.0", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["192.0.0.8", "IETF protocol assignment"],
    ["192.0.0.192", "cloud metadata"],
    ["192.0.2.1", "documentation"],
    ["198.51.100.7", "documentation"],
    ["203.0.113.200", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    // IPv6
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1", "link-local"],
    ["febf:ffff::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456:789a::1", "unique-local"],
    ["fd00:ec2::254", "cloud metadata"],
    ["ff02::1", "multicast"],
    ["ff0e::1", "multicast"],
    ["fec0::1", "site-local"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2001:2::1", "benchmarking"],
    ["2001:10::1", "ORCHID"],
    ["100::1", "discard-only"],
    ["4000::1", "reserved"],
    ["::2", "deprecated IPv4-compatible"],
    ["::7f00:1", "deprecated IPv4-compatible"],
    ["64:ff9b:1::a00:1", "local-use NAT64"],
    ["::ffff:0:7f00:1", "IPv4-translated"],
    // IPv4-mapped: the IPv4 inside is classified
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback"],
    ["::ffff:10.0.0.1", "IPv4-mapped private"],
    ["::ffff:169.254.169.254", "IPv4-mapped cloud metadata"],
    ["::ffff:0.0.0.0", "IPv4-mapped unspecified"],
    ["::ffff:100.64.0.1", "IPv4-mapped carrier-grade NAT"],
    // embedded: NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address; Teredo is refused
    ["64:ff9b::7f00:1", "NAT64 loopback"],
    ["64:ff9b::a9fe:a9fe", "NAT64 cloud metadata"],
    ["64:ff9b::c0a8:101", "NAT64 private"],
    ["2002:7f00:1::", "6to4 loopback"],
    ["2002:a00:1::1", "6to4 private"],
    ["2002:c000:204::1", "6to4 documentation"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo tunnelling"],
    ["2001::1", "Teredo tunnelling"],
    // not an address, or an interface-scoped one
    ["127.1", "invalid"],
    ["0x7f.0.0.1", "invalid"],
    ["example.com", "invalid"],
    ["", "invalid"],
    ["fe80::1%eth0", "interface-scoped"]
  ])("refuses %s as %s", (address, range) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, range })
  })

  it("puts the carrier-grade NAT edges where RFC 6598 does", () => {
    expect(rangeOf("100.63.255.255")).toBe("allowed")
    expect(rangeOf("100.64.0.0")).toBe("carrier-grade NAT")
    expect(rangeOf("100.127.255.255")).toBe("carrier-grade NAT")
    expect(rangeOf("100.128.0.0")).toBe("allowed")
  })

  it("puts the other edges right", () => {
    expect(rangeOf("9.255.255.255")).toBe("allowed")
    expect(rangeOf("11.0.0.0")).toBe("allowed")
    expect(rangeOf("172.15.255.255")).toBe("allowed")
    expect(rangeOf("172.32.0.0")).toBe("allowed")
    expect(rangeOf("198.17.255.255")).toBe("allowed")
    expect(rangeOf("198.20.0.0")).toBe("allowed")
    expect(rangeOf("223.255.255.255")).toBe("allowed")
    expect(rangeOf("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")).toBe("reserved")
    expect(rangeOf("2000::1")).toBe("allowed")
    expect(rangeOf("3ffe:ffff::1")).toBe("allowed")
    expect(rangeOf("2001:db7:ffff::1")).toBe("allowed")
    expect(rangeOf("2001:db9::1")).toBe("allowed")
  })

  it("lets loopback, private, carrier-grade NAT and unique-local through with allowPrivate", () => {
    for (const address of [
      "127.0.0.1",
      "10.0.0.5",
      "172.16.3.4",
      "192.168.0.10",
      "100.64.0.1",
      "::1",
      "fd12::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "64:ff9b::7f00:1",
      "8.8.8.8"
    ])
      expect(classifyAddress(address, { allowPrivate: true }), address).toEqual({ allowed: true })
  })

  it("keeps metadata, link-local, unspecified, multicast, broadcast, reserved and documentation refused with allowPrivate", () => {
    for (const [address, range] of [
      ["169.254.169.254", "cloud metadata"],
      ["fd00:ec2::254", "cloud metadata"],
      ["::ffff:169.254.169.254", "IPv4-mapped cloud metadata"],
      ["169.254.1.1", "link-local"],
      ["fe80::1", "link-local"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["ff02::1", "multicast"],
      ["255.255.255.255", "broadcast"],
      ["240.0.0.1", "reserved"],
      ["192.0.2.1", "documentation"],
      ["2001:db8::1", "documentation"],
      ["2001::1", "Teredo tunnelling"]
    ] as const)
      expect(rangeOf(address, true), address).toBe(range)
  })

  it("says the range with its article", () => {
    expect(describeRange("loopback")).toBe("a loopback address")
    expect(describeRange("unspecified")).toBe("an unspecified address")
    expect(describeRange("unique-local")).toBe("a unique-local address")
    expect(describeRange("IPv4-mapped loopback")).toBe("an IPv4-mapped loopback address")
  })
})
