/**
 * The wallet's confirm results, checked against the option's actions
 * (WIRE.md section 1): one `walletRpc` result per action, in order, whose
 * data is the `eth_signTypedData_v4` signature.
 */
import { Either } from "effect"
import { type Hex, isHex, size } from "viem"
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
  // 65 bytes: r, s and v. (EIP-2098 compact 64-byte signatures are accepted by viem too.)
  if (
    typeof signature !== "string" ||
    !isHex(signature, { strict: true }) ||
    (size(signature) !== 65 && size(signature) !== 64)
  ) {
    return Either.left([
      {
        field: "results.0.data.0",
        message: "must be the eth_signTypedData_v4 signature: 0x and 130 hex digits"
      }
    ])
  }
  return Either.right(signature)
}
