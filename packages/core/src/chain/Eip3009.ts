/**
 * EIP-3009 `ReceiveWithAuthorization`: the typed data a buyer signs (WIRE.md
 * section 2). The domain always comes from the token contract
 * (`Chain.tokenDomain`): USDC's name differs between chains. Permission.ts
 * turns it into the typed data a wallet signs, and checks signatures.
 */

import type { Address, Hex } from "viem"

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
