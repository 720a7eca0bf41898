/**
 * The wallet's confirm results, checked against the option's actions
 * (WIRE.md section 1): one `walletRpc` result per action, in order, whose
 * data is the `eth_signTypedData_v4` signature.
 */
import { Either } from "effect"
import { type Hex, isHex, size } from "viem"
import { MAX_SIGNATURE_BYTES } from "../chain/PayerSignature.js"
import type { FieldIssue } from "../shared/Errors.js"

export interface WalletResult {
  readonly type: string
  readonly data: ReadonlyArray<unknown>
}

/** The signature of the option's one action, or every issue naming its field. */
export const signatureOf = (
  results: ReadonlyArray<WalletResult>
): Either.Either<Hex, ReadonlyArray<FieldIssue>> => {
  if (results.length !== 1) {
    return Either.left([
      {
        field: "results",
        message: `must hold one result per action of the option (1), not ${results.length}`
      }
    ])
  }
  const [result] = results as [WalletResult]
  if (result.type !== "walletRpc") {
    return Either.left([{ field: "results.0.type", message: 'must be "walletRpc"' }])
  }
  const signature = result.data[0]
  // Any length a wallet signs with: 65 bytes for a key pair (64 in EIP-2098's compact form), an
  // account's own for a smart account (ERC-1271), more with an ERC-6492 wrapper; bounded, as
  // the whole confirm is.
  if (typeof signature !== "string" || !isHex(signature, { strict: true })) {
    return Either.left([
      {
        field: "results.0.data.0",
        message: "must be the eth_signTypedData_v4 signature: 0x and hex digits"
      }
    ])
  }
  if (signature.length % 2 !== 0 || size(signature) === 0) {
    return Either.left([
      {
        field: "results.0.data.0",
        message: "must be the eth_signTypedData_v4 signature: whole bytes, at least one"
      }
    ])
  }
  if (size(signature) > MAX_SIGNATURE_BYTES) {
    return Either.left([
      {
        field: "results.0.data.0",
        message: `must be at most ${MAX_SIGNATURE_BYTES} bytes, not ${size(signature)}`
      }
    ])
  }
  return Either.right(signature)
}
