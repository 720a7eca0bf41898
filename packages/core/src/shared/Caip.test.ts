import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc, Schema } from "effect"
import { bytesToHex, getAddress } from "viem"
import {
  Caip2Schema,
  Caip10Schema,
  Caip19Schema,
  chainOfCaip10,
  chainOfCaip19,
  type ParsedCaip2,
  type ParsedCaip10,
  type ParsedCaip19,
  parseCaip2,
  parseCaip10,
  parseCaip19
} from "./Caip.js"

const USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
const USDC_BASE_LOWER = USDC_BASE.toLowerCase()
// USDC_BASE with the case of one checksummed letter flipped.
const USDC_BASE_BAD_CHECKSUM = "0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913"
const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"

// Rebuild the string from the parsed parts, independently of `value`.
const format2 = (p: ParsedCaip2) => `${p.namespace}:${p.reference}`
const format10 = (p: ParsedCaip10) => `${format2(p.chain)}:${p.address}`
const format19 = (p: ParsedCaip19) =>
  `${format2(p.chain)}/${p.assetNamespace}:${p.assetReference}${p.tokenId === undefined ? "" : `/${p.tokenId}`}`

const right = <A>(result: Either.Either<A, string>): A =>
  Either.getOrThrowWith(result, (message) => new Error(`expected Right, got Left: ${message}`))

const left = <A>(result: Either.Either<A, string>): string =>
  Either.match(result, {
    onLeft: (message) => message,
    onRight: (value) => {
      throw new Error(`expected Left, got Right: ${JSON.stringify(value)}`)
    }
  })

describe("parseCaip2", () => {
  it("accepts eip155 and other namespaces unchanged", () => {
    expect(right(parseCaip2("eip155:8453"))).toEqual({
      namespace: "eip155",
      reference: "8453",
      value: "eip155:8453"
    })
    expect(right(parseCaip2(SOLANA_MAINNET)).value).toBe(SOLANA_MAINNET)
    expect(right(parseCaip2("bip122:000000000019d6689c085ae165831e93")).namespace).toBe("bip122")
    // CAIP-2 caps references at 32 characters, which bounds eip155 chain ids too.
    expect(right(parseCaip2(`eip155:${"9".repeat(32)}`)).reference).toHaveLength(32)
    expect(left(parseCaip2(`eip155:${"9".repeat(33)}`))).toMatch(/CAIP-2/)
  })

  it.each(["eip155:0", "eip155:01", "eip155:abc", "eip155:-1"])(
    "refuses the eip155 chain reference in %s",
    (input) => {
      expect(left(parseCaip2(input))).toContain("positive decimal integer")
    }
  )

  it.each([
    "",
    "eip155",
    "eip155:",
    ":8453",
    "ab:1",
    "EIP155:1",
    "toolongns:1",
    `cosmos:${"a".repeat(33)}`,
    "eip155:1:2",
    "eip155:8453/erc20:0x1"
  ])("refuses malformed %j", (input) => {
    expect(left(parseCaip2(input))).toMatch(/CAIP-2/)
  })

  it("refuses surrounding whitespace and overlong input", () => {
    expect(left(parseCaip2(" eip155:1"))).toMatch(/whitespace/)
    expect(left(parseCaip2("eip155:1\n"))).toMatch(/whitespace/)
    expect(left(parseCaip2(`eip155:${"1".repeat(300)}`))).toMatch(/300 characters/)
  })
})

describe("parseCaip10", () => {
  it("accepts a checksummed EVM account", () => {
    const parsed = right(parseCaip10(`eip155:8453:${USDC_BASE}`))
    expect(parsed.chain.value).toBe("eip155:8453")
    expect(parsed.address).toBe(USDC_BASE)
    expect(parsed.value).toBe(`eip155:8453:${USDC_BASE}`)
  })

  it("normalises lowercase and uppercase addresses to the checksum", () => {
    expect(right(parseCaip10(`eip155:8453:${USDC_BASE_LOWER}`)).value).toBe(
      `eip155:8453:${USDC_BASE}`
    )
    const upper = `0x${USDC_BASE.slice(2).toUpperCase()}`
    expect(right(parseCaip10(`eip155:8453:${upper}`)).address).toBe(USDC_BASE)
  })

  it("refuses a wrong checksum", () => {
    expect(left(parseCaip10(`eip155:8453:${USDC_BASE_BAD_CHECKSUM}`))).toBe("bad address checksum")
  })

  it("refuses what is not an EVM address on eip155", () => {
    expect(left(parseCaip10("eip155:1:0x12"))).toBe("0x12 is not a valid EVM address")
    expect(left(parseCaip10(`eip155:1:${USDC_BASE.slice(2)}`))).toMatch(/not a valid EVM address/)
    expect(left(parseCaip10(`eip155:1:0X${USDC_BASE.slice(2)}`))).toMatch(/not a valid EVM/)
    expect(left(parseCaip10(`eip155:01:${USDC_BASE}`))).toMatch(/positive decimal integer/)
  })

  it("accepts other namespaces on the generic pattern, unchanged", () => {
    const input = `${SOLANA_MAINNET}:7S3P4HxJpyyigGzodYwHtCxZyUQe9JiBMHyRWXArAaKv`
    const parsed = right(parseCaip10(input))
    expect(parsed.value).toBe(input)
    expect(parsed.chain.namespace).toBe("solana")
    expect(parsed.address).toBe("7S3P4HxJpyyigGzodYwHtCxZyUQe9JiBMHyRWXArAaKv")
    expect(
      right(
        parseCaip10("bip122:000000000019d6689c085ae165831e93:128Lkh3S7CkDTBZ8W7BbpsN3YYizJMp8p6")
      ).value
    ).toBe("bip122:000000000019d6689c085ae165831e93:128Lkh3S7CkDTBZ8W7BbpsN3YYizJMp8p6")
  })

  it.each([
    "eip155:8453",
    "eip155:8453:",
    `eip155:8453:${USDC_BASE}/x`,
    "solana:abc:a b",
    `cosmos:hub:${"a".repeat(129)}`
  ])("refuses malformed %j", (input) => {
    expect(left(parseCaip10(input))).toBe("must be a CAIP-10 account id like eip155:8453:0xabc…")
  })

  it("finds the chain of a canonical id", () => {
    const parsed = right(parseCaip10(`eip155:8453:${USDC_BASE_LOWER}`))
    expect(chainOfCaip10(parsed.value)).toBe(parsed.chain.value)
  })
})

describe("parseCaip19", () => {
  it("accepts USDC on Base", () => {
    const parsed = right(parseCaip19(`eip155:8453/erc20:${USDC_BASE}`))
    expect(parsed).toEqual({
      chain: { namespace: "eip155", reference: "8453", value: "eip155:8453" },
      assetNamespace: "erc20",
      assetReference: USDC_BASE,
      tokenId: undefined,
      value: `eip155:8453/erc20:${USDC_BASE}`
    })
    expect(chainOfCaip19(parsed.value)).toBe("eip155:8453")
  })

  it("normalises EVM token addresses and keeps token ids", () => {
    expect(right(parseCaip19(`eip155:8453/erc20:${USDC_BASE_LOWER}`)).value).toBe(
      `eip155:8453/erc20:${USDC_BASE}`
    )
    const nft = right(parseCaip19(`eip155:1/erc721:${USDC_BASE_LOWER}/771769`))
    expect(nft.assetReference).toBe(USDC_BASE)
    expect(nft.tokenId).toBe("771769")
    expect(nft.value).toBe(`eip155:1/erc721:${USDC_BASE}/771769`)
    expect(right(parseCaip19(`eip155:1/erc1155:${USDC_BASE}/1`)).tokenId).toBe("1")
  })

  it("refuses bad EVM token references", () => {
    expect(left(parseCaip19(`eip155:8453/erc20:${USDC_BASE_BAD_CHECKSUM}`))).toBe(
      "bad address checksum"
    )
    expect(left(parseCaip19("eip155:8453/erc20:0x12"))).toBe("0x12 is not a valid EVM address")
    expect(left(parseCaip19("eip155:1/erc721:usdc/1"))).toMatch(/not a valid EVM address/)
  })

  it("checks slip44 references on eip155", () => {
    expect(right(parseCaip19("eip155:1/slip44:60")).assetReference).toBe("60")
    expect(left(parseCaip19("eip155:1/slip44:eth"))).toMatch(/decimal integer/)
    expect(left(parseCaip19("eip155:1/slip44:060"))).toMatch(/decimal integer/)
  })

  it("accepts other namespaces on the generic pattern, unchanged", () => {
    for (const input of [
      "eip155:1/unknown:Anything-goes.%20",
      `${SOLANA_MAINNET}/token:EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v`,
      "bip122:000000000019d6689c085ae165831e93/slip44:0",
      "cosmos:cosmoshub-3/slip44:118"
    ]) {
      expect(right(parseCaip19(input)).value).toBe(input)
    }
  })

  it.each([
    "eip155:8453",
    `eip155:8453:${USDC_BASE}`,
    `eip155:8453/erc20:${USDC_BASE}/`,
    `eip155:8453/ERC20:${USDC_BASE}`,
    `eip155:8453/erc20:${USDC_BASE}/1/2`,
    `eip155:1/erc721:${USDC_BASE}/${"1".repeat(79)}`
  ])("refuses malformed %j", (input) => {
    expect(left(parseCaip19(input))).toBe(
      "must be a CAIP-19 asset id like eip155:8453/erc20:0xabc…"
    )
  })
})

describe("schemas", () => {
  it("decode normalises and encode is the identity", () => {
    const decoded = Schema.decodeUnknownSync(Caip19Schema)(`eip155:8453/erc20:${USDC_BASE_LOWER}`)
    expect(decoded).toBe(`eip155:8453/erc20:${USDC_BASE}`)
    expect(Schema.encodeSync(Caip19Schema)(decoded)).toBe(decoded)
    expect(Schema.decodeUnknownSync(Caip2Schema)("eip155:8453")).toBe("eip155:8453")
  })

  it("fail with the parse message", () => {
    const result = Schema.decodeUnknownEither(Caip10Schema)(`eip155:8453:${USDC_BASE_BAD_CHECKSUM}`)
    expect(Either.isLeft(result) && result.left.message).toContain("bad address checksum")
    expect(Either.isLeft(Schema.decodeUnknownEither(Caip2Schema)(8453))).toBe(true)
  })
})

// Strings drawn from the generic patterns, with the namespace kept off eip155 so they must parse.
const namespace = fc.stringMatching(/^[-a-z0-9]{3,8}$/).filter((ns) => ns !== "eip155")
const reference = fc.stringMatching(/^[-_a-zA-Z0-9]{1,32}$/)
const accountAddress = fc.stringMatching(/^[-.%a-zA-Z0-9]{1,128}$/)
const assetNamespace = fc.stringMatching(/^[-a-z0-9]{3,8}$/)
const tokenId = fc.option(fc.stringMatching(/^[-.%a-zA-Z0-9]{1,78}$/), { nil: undefined })

const evmChainId = fc.bigInt({ min: 1n, max: 10n ** 32n - 1n })
const lowerAddress = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((bytes) => bytesToHex(bytes))
// Any casing: the checksum only matters when the case is mixed, and getAddress fixes it.
const evmAddressAnyCase = fc
  .tuple(lowerAddress, fc.constantFrom("lower", "upper", "checksum"))
  .map(([address, casing]) =>
    casing === "lower"
      ? address
      : casing === "upper"
        ? `0x${address.slice(2).toUpperCase()}`
        : getAddress(address)
  )

const caip2 = fc.oneof(
  fc.tuple(namespace, reference).map(([ns, ref]) => `${ns}:${ref}`),
  evmChainId.map((id) => `eip155:${id}`)
)
const caip10 = fc.oneof(
  fc.tuple(namespace, reference, accountAddress).map(([ns, ref, a]) => `${ns}:${ref}:${a}`),
  fc.tuple(evmChainId, evmAddressAnyCase).map(([id, a]) => `eip155:${id}:${a}`)
)
const caip19 = fc.oneof(
  fc
    .tuple(namespace, reference, assetNamespace, accountAddress, tokenId)
    .map(
      ([ns, ref, assetNs, assetRef, id]) =>
        `${ns}:${ref}/${assetNs}:${assetRef}${id === undefined ? "" : `/${id}`}`
    ),
  fc
    .tuple(evmChainId, fc.constantFrom("erc20", "erc721", "erc1155"), evmAddressAnyCase, tokenId)
    .map(
      ([chainId, assetNs, a, id]) =>
        `eip155:${chainId}/${assetNs}:${a}${id === undefined ? "" : `/${id}`}`
    ),
  fc.tuple(evmChainId, fc.nat()).map(([chainId, coin]) => `eip155:${chainId}/slip44:${coin}`)
)

// Garbage biased towards the CAIP alphabet so that it gets past the first checks now and then.
const garbage = fc.oneof(
  fc.string({ maxLength: 320 }),
  fc.string({ unit: "binary", maxLength: 80 }),
  fc
    .array(fc.constantFrom(..."eip155:0x/.%-_ aAfF9:/"), { maxLength: 320 })
    .map((chars) => chars.join(""))
)

describe("properties", () => {
  it.prop("CAIP-2 round-trips and is idempotent", [caip2], ([input]) => {
    const parsed = right(parseCaip2(input))
    expect(format2(parsed)).toBe(parsed.value)
    expect(right(parseCaip2(format2(parsed)))).toEqual(parsed)
    expect(right(parseCaip2(parsed.value)).value).toBe(parsed.value)
  })

  it.prop("CAIP-10 round-trips and is idempotent", [caip10], ([input]) => {
    const parsed = right(parseCaip10(input))
    expect(format10(parsed)).toBe(parsed.value)
    expect(right(parseCaip10(format10(parsed)))).toEqual(parsed)
    expect(right(parseCaip10(parsed.value)).value).toBe(parsed.value)
    expect(chainOfCaip10(parsed.value)).toBe(parsed.chain.value)
  })

  it.prop("CAIP-19 round-trips and is idempotent", [caip19], ([input]) => {
    const parsed = right(parseCaip19(input))
    expect(format19(parsed)).toBe(parsed.value)
    expect(right(parseCaip19(format19(parsed)))).toEqual(parsed)
    expect(right(parseCaip19(parsed.value)).value).toBe(parsed.value)
    expect(chainOfCaip19(parsed.value)).toBe(parsed.chain.value)
  })

  it.prop(
    "any lowercase EVM address on any eip155 chain parses to viem's checksum",
    [evmChainId, lowerAddress],
    ([chainId, address]) => {
      const parsed = right(parseCaip10(`eip155:${chainId}:${address}`))
      expect(parsed.address).toBe(getAddress(address))
      expect(parsed.value).toBe(`eip155:${chainId}:${getAddress(address)}`)
      const asset = right(parseCaip19(`eip155:${chainId}/erc20:${address}`))
      expect(asset.assetReference).toBe(getAddress(address))
    }
  )

  const schemas: ReadonlyArray<Schema.Schema.AnyNoContext> = [
    Caip2Schema,
    Caip10Schema,
    Caip19Schema
  ]

  it.prop(
    "garbage never throws",
    [garbage],
    ([input]) => {
      for (const parse of [parseCaip2, parseCaip10, parseCaip19]) {
        expect(Either.isEither(parse(input))).toBe(true)
      }
      for (const schema of schemas) {
        expect(Either.isEither(Schema.decodeUnknownEither(schema)(input))).toBe(true)
      }
    },
    { fastCheck: { numRuns: 1000 } }
  )
})
