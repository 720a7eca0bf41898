/**
 * A buyer's signature of an authorization, told apart by its shape before
 * anything asks the chain: what decides how it is checked at confirm
 * (gateway/Gateway.ts) and which call the collect job sends.
 *
 * - `ecdsa`: 65 bytes (r, s, v), or 64 in EIP-2098's compact form, widened to
 *   65: the token's `v, r, s` call takes no other. Most likely a key pair's
 *   (an EOA, or an EOA delegated by EIP-7702), but a one-owner Safe's
 *   ERC-1271 signature is 65 bytes too: only recovering it tells.
 * - `contract`: any other length, for the account's ERC-1271
 *   `isValidSignature` (the token's `bytes signature` call).
 * - `counterfactual`: ERC-6492, an account not deployed yet: its factory, the
 *   factory's calldata and the inner signature, ending in the magic suffix.
 */
import {
  type Address,
  compactSignatureToSignature,
  type Hex,
  isErc6492Signature,
  isHex,
  parseCompactSignature,
  parseErc6492Signature,
  serializeSignature,
  size
} from "viem"
import type { AccountDeployment } from "./Chain.js"

/**
 * The longest signature a confirm takes, in bytes. A Safe of many owners or
 * a passkey account's WebAuthn data stays well under it; an ERC-6492 wrapper
 * with a factory's calldata too.
 */
export const MAX_SIGNATURE_BYTES = 8192

export type PayerSignature =
  | { readonly kind: "ecdsa"; readonly signature: Hex }
  | { readonly kind: "contract"; readonly signature: Hex }
  | {
      readonly kind: "counterfactual"
      /** What the account checks once deployed. */
      readonly signature: Hex
      /** The whole ERC-6492 signature, as viem's verification takes it. */
      readonly wrapped: Hex
      readonly deployment: AccountDeployment
    }

/** The signature's shape, or why it is none: `signature` is hex of 1 to `MAX_SIGNATURE_BYTES` bytes. */
export const parsePayerSignature = (signature: Hex): PayerSignature | string => {
  if (isErc6492Signature(signature)) {
    let parsed: ReturnType<typeof parseErc6492Signature>
    try {
      parsed = parseErc6492Signature(signature)
    } catch {
      return "is an ERC-6492 signature whose factory, calldata and signature cannot be read"
    }
    const { address, data, signature: inner } = parsed
    if (address === undefined || data === undefined || size(inner) === 0) {
      return "is an ERC-6492 signature without its factory, calldata or inner signature"
    }
    return {
      kind: "counterfactual",
      signature: widened(inner),
      wrapped: signature,
      deployment: { factory: address as Address, factoryData: data }
    }
  }
  const length = size(signature)
  if (length === 65) return { kind: "ecdsa", signature }
  if (length === 64) return { kind: "ecdsa", signature: widened(signature) }
  return { kind: "contract", signature }
}

/** A 64-byte compact signature as the 65 bytes tokens take; any other as it is. */
const widened = (signature: Hex): Hex =>
  size(signature) === 64 && isHex(signature, { strict: true })
    ? serializeSignature(compactSignatureToSignature(parseCompactSignature(signature)))
    : signature

/**
 * The signature the account itself checks, once deployed: the inner one of an
 * ERC-6492 wrapper, else the signature (a compact one widened).
 */
export const accountSignatureOf = (signature: Hex): Hex => {
  const parsed = parsePayerSignature(signature)
  return typeof parsed === "string" ? signature : parsed.signature
}
