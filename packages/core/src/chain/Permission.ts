/**
 * What a buyer signs to let the collector take a payment, for each way a
 * token can be paid:
 *
 * - `eip3009`: the token's own `ReceiveWithAuthorization` (USDC, EURC),
 *   under the token's EIP-712 domain (read from the contract).
 * - `permit2`: Uniswap's Permit2 `PermitWitnessTransferFrom`, for any ERC-20
 *   (USDT, DAI) the buyer has approved Permit2 for. The collector is the
 *   spender and takes the transfer to itself; the witness names the payment
 *   and the option, so a signature made for one payment can pay no other
 *   (and a wallet shows the buyer which payment it signs for).
 *
 * Both keep their fields in the option's stored authorization: `from` the
 * payer, `to` the collector (payee, or Permit2's spender), `value`, the
 * window (`validBefore` is Permit2's `deadline`) and the 32-byte `nonce`
 * (Permit2 reads it as a uint256: any value is an unordered nonce).
 */
import { Effect } from "effect"
import {
  type Address,
  type Hex,
  hexToBigInt,
  isAddressEqual,
  recoverTypedDataAddress,
  type TypedDataDefinition,
  toHex
} from "viem"
import {
  type Eip712Domain,
  RECEIVE_WITH_AUTHORIZATION_TYPES,
  type ReceiveAuthorization
} from "./Eip3009.js"

/**
 * How a token is paid: its own EIP-3009 authorization, a Permit2 signature
 * transfer, or (`native`, the network's own coin) a transfer the buyer's
 * wallet sends itself (chainwork/NativeCollect.ts watches it).
 */
export type TokenAuthorization = "eip3009" | "permit2" | "native"

export const TOKEN_AUTHORIZATIONS: ReadonlyArray<TokenAuthorization> = [
  "eip3009",
  "permit2",
  "native"
]

/**
 * The address a network's own coin is named by where an address is expected
 * (EIP-7528): the coin has no contract.
 */
export const NATIVE_COIN_ADDRESS: Address = "0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE"

/** Uniswap's Permit2, at the same address on every chain it is deployed on (and on the sandbox's). */
export const PERMIT2_ADDRESS: Address = "0x000000000022D473030F116dDEE9F6B43aC78BA3"

/** The payment a Permit2 signature is bound to (its witness). */
export interface PaymentWitness {
  readonly paymentId: string
  readonly optionId: string
}

export type Permission =
  | { readonly kind: "eip3009"; readonly authorization: ReceiveAuthorization }
  | {
      readonly kind: "permit2"
      readonly authorization: ReceiveAuthorization
      /** The token's contract: the permit's `permitted.token`. */
      readonly token: Address
      /** Permit2's address on the network: the domain's verifying contract and the call's target. */
      readonly permit2: Address
      readonly witness: PaymentWitness
    }

/** Permit2's domain has no version: `{name: "Permit2", chainId, verifyingContract}`. */
const PERMIT2_DOMAIN_TYPES = [
  { name: "name", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" }
] as const

/**
 * `PermitWitnessTransferFrom` with the engine's witness, as Permit2 hashes
 * it: the witness struct named in the stub's last field, then the
 * referenced types in EIP-712's alphabetical order (Payment, TokenPermissions).
 */
export const PERMIT2_WITNESS_TYPES = {
  PermitWitnessTransferFrom: [
    { name: "permitted", type: "TokenPermissions" },
    { name: "spender", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
    { name: "witness", type: "Payment" }
  ],
  Payment: [
    { name: "paymentId", type: "string" },
    { name: "optionId", type: "string" }
  ],
  TokenPermissions: [
    { name: "token", type: "address" },
    { name: "amount", type: "uint256" }
  ]
} as const

/** The witness's type: `Payment(string paymentId,string optionId)`. */
export const PAYMENT_WITNESS_TYPE = "Payment(string paymentId,string optionId)"

/**
 * `permitWitnessTransferFrom`'s `witnessTypeString`: the stub's last field
 * and every type it references, sorted, as Permit2 appends it to its stub.
 */
export const PAYMENT_WITNESS_TYPE_STRING = `Payment witness)${PAYMENT_WITNESS_TYPE}TokenPermissions(address token,uint256 amount)`

/** The typed data a permission is signed as: viem's form, numbers as bigints. */
export type SigningRequest = TypedDataDefinition & {
  readonly domain: Readonly<Record<string, unknown>>
}

/**
 * The typed data the buyer signs. `tokenDomain` is the token's EIP-712
 * domain, read from the contract; only an EIP-3009 permission needs it
 * (Permit2's domain is Permit2's own, on `chainId`).
 */
export const signingRequest = (
  permission: Permission,
  chainId: bigint,
  tokenDomain: Eip712Domain | undefined
): SigningRequest => {
  const auth = permission.authorization
  if (permission.kind === "eip3009") {
    if (tokenDomain === undefined)
      throw new Error("an EIP-3009 permission needs the token's domain")
    const { EIP712Domain: _, ...types } = RECEIVE_WITH_AUTHORIZATION_TYPES
    return {
      domain: { ...tokenDomain },
      types,
      primaryType: "ReceiveWithAuthorization",
      message: { ...auth }
    } as SigningRequest
  }
  return {
    domain: { name: "Permit2", chainId, verifyingContract: permission.permit2 },
    types: PERMIT2_WITNESS_TYPES,
    primaryType: "PermitWitnessTransferFrom",
    message: {
      permitted: { token: permission.token, amount: auth.value },
      spender: auth.to,
      nonce: hexToBigInt(auth.nonce),
      deadline: auth.validBefore,
      witness: { ...permission.witness }
    }
  } as SigningRequest
}

type TypeField = { readonly name: string; readonly type: string }
type Types = Readonly<Record<string, ReadonlyArray<TypeField>>>

/** Each value of a struct, its numbers mapped by `number` and its nested structs walked. */
const mapNumbers = (
  types: Types,
  type: string,
  value: Readonly<Record<string, unknown>>,
  number: (v: unknown) => unknown
): Record<string, unknown> =>
  Object.fromEntries(
    (types[type] ?? []).map((field) => {
      const v = value[field.name]
      if (types[field.type] !== undefined) {
        return [field.name, mapNumbers(types, field.type, v as Record<string, unknown>, number)]
      }
      return [field.name, /^u?int\d*$/.test(field.type) ? number(v) : v]
    })
  )

const domainTypesOf = (domain: Readonly<Record<string, unknown>>): ReadonlyArray<TypeField> =>
  "version" in domain ? RECEIVE_WITH_AUTHORIZATION_TYPES.EIP712Domain : PERMIT2_DOMAIN_TYPES

/**
 * The `eth_signTypedData_v4` request as wallets receive it: numbers as hex
 * strings, `EIP712Domain` among the types (some wallets misbehave without it).
 */
export const typedDataJson = (request: SigningRequest): string => {
  const types = request.types as Types
  const domainTypes = domainTypesOf(request.domain)
  const allTypes: Types = { EIP712Domain: domainTypes, ...types }
  const hex = (v: unknown) => toHex(v as bigint)
  return JSON.stringify({
    domain: mapNumbers(allTypes, "EIP712Domain", request.domain, hex),
    types: allTypes,
    primaryType: request.primaryType,
    message: mapNumbers(
      allTypes,
      request.primaryType as string,
      request.message as Record<string, unknown>,
      hex
    )
  })
}

/**
 * The wallet's side of `typedDataJson`: the request as viem's `signTypedData`
 * takes it (numbers as bigints, `EIP712Domain` left to viem), for the example
 * wallets that sign what the engine sent.
 */
export const typedDataFromJson = (json: string): TypedDataDefinition => {
  const typed = JSON.parse(json) as {
    domain: Record<string, unknown>
    types: Types
    primaryType: string
    message: Record<string, unknown>
  }
  const { EIP712Domain: _, ...types } = typed.types
  const big = (v: unknown) => hexToBigInt(v as Hex)
  return {
    domain: mapNumbers(typed.types, "EIP712Domain", typed.domain, big),
    types,
    primaryType: typed.primaryType,
    message: mapNumbers(typed.types, typed.primaryType, typed.message, big)
  } as TypedDataDefinition
}

/** The address that signed `request`, or undefined for a malformed signature. */
export const recoverSigner = (request: SigningRequest, signature: Hex) =>
  Effect.tryPromise(() => recoverTypedDataAddress({ ...request, signature } as never)).pipe(
    Effect.option,
    Effect.map((signer) => (signer._tag === "Some" ? (signer.value as Address) : undefined))
  )

/** Whether `signature` is `from`'s key pair's signature of `request`. */
export const isSignedBy = (request: SigningRequest, from: Address, signature: Hex) =>
  Effect.map(
    recoverSigner(request, signature),
    (signer) => signer !== undefined && isAddressEqual(signer, from)
  )

/** Whether `signature` is `auth.from`'s key pair's signature of an EIP-3009 authorization. */
export const isSignedByPayer = (domain: Eip712Domain, auth: ReceiveAuthorization, signature: Hex) =>
  isSignedBy(
    signingRequest({ kind: "eip3009", authorization: auth }, domain.chainId, domain),
    auth.from,
    signature
  )

/** What an option says of its permission: enough to rebuild what the buyer signed. */
export interface PermissionSource {
  readonly id: string
  readonly paymentId: string
  readonly asset: string
  readonly method: TokenAuthorization
  readonly authorization: ReceiveAuthorization
}

/**
 * The permission an option's buyer signs, on its network (whose Permit2 it
 * names). A native option has none (its buyer sends the coin): asking for
 * one is a defect of the caller.
 */
export const permissionOf = (
  option: PermissionSource,
  network: { readonly permit2: Address }
): Permission => {
  if (option.method === "native") {
    throw new Error(`option ${option.id} is paid in the native coin: nothing is signed`)
  }
  return option.method === "eip3009"
    ? { kind: "eip3009", authorization: option.authorization }
    : {
        kind: "permit2",
        authorization: option.authorization,
        // The asset's reference is the token's address (`eip155:1/erc20:0x…`).
        token: option.asset.slice(option.asset.lastIndexOf(":") + 1) as Address,
        permit2: network.permit2,
        witness: { paymentId: option.paymentId, optionId: option.id }
      }
}
