/**
 * EIP-3009 `ReceiveWithAuthorization`: the typed data a buyer signs (WIRE.md
 * section 2) and the checks on a signature, as pure functions of viem. The
 * domain always comes from the token contract (`Chain.tokenDomain`): USDC's
 * name differs between chains.
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

export interface Eip712Domain {
  readonly name: string
  readonly version: string
  readonly chainId: bigint
  readonly verifyingContract: Address
}

/** The authorization's message: `to` is always the engine's collecting address. */
export interface ReceiveAuthorization {
  readonly from: Address
  readonly to: Address
  readonly value: bigint
  /** Unix seconds; the transfer is valid strictly after it and strictly before `validBefore`. */
  readonly validAfter: bigint
  readonly validBefore: bigint
  readonly nonce: Hex
}

export const RECEIVE_WITH_AUTHORIZATION_TYPES = {
  EIP712Domain: [
    { name: "name", type: "string" },
    { name: "version", type: "string" },
    { name: "chainId", type: "uint256" },
    { name: "verifyingContract", type: "address" }
  ],
  ReceiveWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" }
  ]
} as const

/**
 * The `eth_signTypedData_v4` request as wallets receive it: numbers as hex
 * strings, `EIP712Domain` among the types (some wallets misbehave without it).
 */
export const typedDataJson = (domain: Eip712Domain, auth: ReceiveAuthorization): string =>
  JSON.stringify({
    domain: {
      name: domain.name,
      version: domain.version,
      chainId: toHex(domain.chainId),
      verifyingContract: domain.verifyingContract
    },
    types: RECEIVE_WITH_AUTHORIZATION_TYPES,
    primaryType: "ReceiveWithAuthorization",
    message: {
      from: auth.from,
      to: auth.to,
      value: toHex(auth.value),
      validAfter: toHex(auth.validAfter),
      validBefore: toHex(auth.validBefore),
      nonce: auth.nonce
    }
  })

/**
 * The wallet's side of `typedDataJson`: the request as viem's `signTypedData`
 * takes it (numbers as bigints, `EIP712Domain` left to viem), for the example
 * wallets that sign what the engine sent.
 */
export const typedDataFromJson = (json: string): TypedDataDefinition => {
  const typed = JSON.parse(json)
  const { EIP712Domain: _, ...types } = typed.types
  const numeric = new Set(["value", "validAfter", "validBefore"])
  const message = Object.fromEntries(
    Object.entries(typed.message as Record<string, string>).map(([k, v]) =>
      numeric.has(k) ? [k, hexToBigInt(v as Hex)] : [k, v]
    )
  )
  return {
    domain: { ...typed.domain, chainId: hexToBigInt(typed.domain.chainId) },
    types,
    primaryType: typed.primaryType,
    message
  } as TypedDataDefinition
}

/** The address that signed `auth` under `domain`, or undefined for a malformed signature. */
export const recoverSigner = (domain: Eip712Domain, auth: ReceiveAuthorization, signature: Hex) =>
  Effect.tryPromise(() =>
    recoverTypedDataAddress({
      domain: { ...domain },
      types: RECEIVE_WITH_AUTHORIZATION_TYPES,
      primaryType: "ReceiveWithAuthorization",
      message: { ...auth },
      signature
    })
  ).pipe(
    Effect.option,
    Effect.map((signer) => (signer._tag === "Some" ? signer.value : undefined))
  )

/** Whether `signature` is `auth.from`'s signature of `auth`. */
export const isSignedByPayer = (domain: Eip712Domain, auth: ReceiveAuthorization, signature: Hex) =>
  Effect.map(
    recoverSigner(domain, auth, signature),
    (signer) => signer !== undefined && isAddressEqual(signer, auth.from)
  )
