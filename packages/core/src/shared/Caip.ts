// CAIP-2 chain ids, CAIP-10 account ids and CAIP-19 asset ids, parsed and validated once at the
// edge so the rest of the engine only ever sees one canonical spelling of each (EVM addresses
// checksummed) and can compare them as plain strings.
import { type Brand, Either, ParseResult, Schema } from "effect"
import { getAddress, isAddress } from "viem"

export type Caip2 = string & Brand.Brand<"Caip2">
export type Caip10 = string & Brand.Brand<"Caip10">
export type Caip19 = string & Brand.Brand<"Caip19">

export interface ParsedCaip2 {
  readonly namespace: string
  readonly reference: string
  readonly value: Caip2
}

export interface ParsedCaip10 {
  readonly chain: ParsedCaip2
  readonly address: string
  readonly value: Caip10
}

export interface ParsedCaip19 {
  readonly chain: ParsedCaip2
  readonly assetNamespace: string
  readonly assetReference: string
  readonly tokenId: string | undefined
  readonly value: Caip19
}

// Longer than any well-formed id (the CAIP-19 maximum is 258), so nothing valid is cut off.
const MAX_LENGTH = 300

const CHAIN = "([-a-z0-9]{3,8}):([-_a-zA-Z0-9]{1,32})"
const CAIP2 = new RegExp(`^${CHAIN}$`)
const CAIP10 = new RegExp(`^${CHAIN}:([-.%a-zA-Z0-9]{1,128})$`)
const CAIP19 = new RegExp(
  `^${CHAIN}/([-a-z0-9]{3,8}):([-.%a-zA-Z0-9]{1,128})(?:/([-.%a-zA-Z0-9]{1,78}))?$`
)

// No leading zeros, so each chain has exactly one spelling; CHAIN already caps it at 32 digits.
const EIP155_CHAIN_ID = /^[1-9][0-9]*$/
const DECIMAL = /^(?:0|[1-9][0-9]*)$/
const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const EVM_ASSET_NAMESPACES: ReadonlySet<string> = new Set(["erc20", "erc721", "erc1155"])

const checkInput = (input: string): Either.Either<void, string> =>
  input.length > MAX_LENGTH
    ? Either.left(`must be at most ${MAX_LENGTH} characters`)
    : input.trim() !== input
      ? Either.left("must not have leading or trailing whitespace")
      : Either.void

const evmAddress = (address: string): Either.Either<string, string> => {
  if (!HEX_ADDRESS.test(address)) return Either.left(`${address} is not a valid EVM address`)
  const hex = address.slice(2)
  // EIP-55: a single-case address carries no checksum; only mixed case has to match it.
  const singleCase = hex === hex.toLowerCase() || hex === hex.toUpperCase()
  if (!singleCase && !isAddress(address, { strict: true })) {
    return Either.left("bad address checksum")
  }
  return Either.right(getAddress(address))
}

const chain = (namespace: string, reference: string): Either.Either<ParsedCaip2, string> =>
  namespace === "eip155" && !EIP155_CHAIN_ID.test(reference)
    ? Either.left(`eip155 chain reference must be a positive decimal integer, got ${reference}`)
    : Either.right({ namespace, reference, value: `${namespace}:${reference}` as Caip2 })

const assetReference = (
  onChain: ParsedCaip2,
  assetNamespace: string,
  reference: string
): Either.Either<string, string> => {
  if (onChain.namespace !== "eip155") return Either.right(reference)
  if (EVM_ASSET_NAMESPACES.has(assetNamespace)) return evmAddress(reference)
  if (assetNamespace === "slip44" && !DECIMAL.test(reference)) {
    return Either.left(`slip44 asset reference must be a decimal integer, got ${reference}`)
  }
  return Either.right(reference)
}

export const parseCaip2 = (input: string): Either.Either<ParsedCaip2, string> =>
  Either.gen(function* () {
    yield* checkInput(input)
    const match = CAIP2.exec(input)
    if (match === null) return yield* Either.left("must be a CAIP-2 chain id like eip155:8453")
    return yield* chain(match[1]!, match[2]!)
  })

export const parseCaip10 = (input: string): Either.Either<ParsedCaip10, string> =>
  Either.gen(function* () {
    yield* checkInput(input)
    const match = CAIP10.exec(input)
    if (match === null) {
      return yield* Either.left("must be a CAIP-10 account id like eip155:8453:0xabc…")
    }
    const parsedChain = yield* chain(match[1]!, match[2]!)
    const raw = match[3]!
    const address = parsedChain.namespace === "eip155" ? yield* evmAddress(raw) : raw
    return { chain: parsedChain, address, value: `${parsedChain.value}:${address}` as Caip10 }
  })

export const parseCaip19 = (input: string): Either.Either<ParsedCaip19, string> =>
  Either.gen(function* () {
    yield* checkInput(input)
    const match = CAIP19.exec(input)
    if (match === null) {
      return yield* Either.left("must be a CAIP-19 asset id like eip155:8453/erc20:0xabc…")
    }
    const parsedChain = yield* chain(match[1]!, match[2]!)
    const assetNamespace = match[3]!
    const reference = yield* assetReference(parsedChain, assetNamespace, match[4]!)
    const tokenId = match[5]
    const asset = `${parsedChain.value}/${assetNamespace}:${reference}`
    return {
      chain: parsedChain,
      assetNamespace,
      assetReference: reference,
      tokenId,
      value: (tokenId === undefined ? asset : `${asset}/${tokenId}`) as Caip19
    }
  })

const fromParser = <B extends string>(
  brand: B,
  parse: (input: string) => Either.Either<{ readonly value: string & Brand.Brand<B> }, string>
) =>
  Schema.transformOrFail(Schema.String, Schema.String.pipe(Schema.brand(brand)), {
    strict: true,
    decode: (input, _, ast) =>
      Either.match(parse(input), {
        onLeft: (message) => ParseResult.fail(new ParseResult.Type(ast, input, message)),
        onRight: (parsed) => ParseResult.succeed(parsed.value)
      }),
    encode: ParseResult.succeed
  })

export const Caip2Schema: Schema.Schema<Caip2, string> = fromParser(
  "Caip2",
  parseCaip2
).annotations({
  identifier: "Caip2",
  title: "CAIP-2 chain id",
  description: "A blockchain id per CAIP-2: <namespace>:<reference>.",
  examples: ["eip155:8453" as Caip2, "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" as Caip2]
})

export const Caip10Schema: Schema.Schema<Caip10, string> = fromParser(
  "Caip10",
  parseCaip10
).annotations({
  identifier: "Caip10",
  title: "CAIP-10 account id",
  description:
    "An account per CAIP-10: <chain id>:<address>. EVM addresses are returned EIP-55 checksummed.",
  examples: ["eip155:8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip10]
})

export const Caip19Schema: Schema.Schema<Caip19, string> = fromParser(
  "Caip19",
  parseCaip19
).annotations({
  identifier: "Caip19",
  title: "CAIP-19 asset id",
  description:
    "An asset per CAIP-19: <chain id>/<asset namespace>:<asset reference>[/<token id>]. EVM addresses are returned EIP-55 checksummed.",
  examples: [
    "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Caip19,
    "eip155:1/slip44:60" as Caip19
  ]
})

// Canonical ids have no ':' in the address and no '/' in the chain id, so slicing is exact.
export const chainOfCaip10 = (v: Caip10): Caip2 => v.slice(0, v.lastIndexOf(":")) as Caip2

export const chainOfCaip19 = (v: Caip19): Caip2 => v.slice(0, v.indexOf("/")) as Caip2

/** The account address of a CAIP-10 id (its last part). */
export const addressOfCaip10 = (v: Caip10): string => v.slice(v.lastIndexOf(":") + 1)
