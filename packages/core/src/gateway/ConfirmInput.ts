/**
 * The wallet's confirm results, checked against the option's actions
 * (WIRE.md section 1): one `walletRpc` result per action, in order. The last
 * action signs (`eth_signTypedData_v4`): its data is the signature. A
 * Permit2 option whose buyer must approve Permit2 first has one or two
 * `eth_sendTransaction` actions before it: their data are the transactions'
 * hashes.
 */
import { Either } from "effect"
import { type Hex, isHex, size } from "viem"
import { MAX_SIGNATURE_BYTES } from "../chain/PayerSignature.js"
import type { FieldIssue } from "../shared/Errors.js"

export interface WalletResult {
  readonly type: string
  readonly data: ReadonlyArray<unknown>
}

export interface ConfirmResults {
  /** The hashes of the approvals the wallet sent, in order. */
  readonly approvals: ReadonlyArray<Hex>
  readonly signature: Hex
}

const TRANSACTION_HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * The approvals' hashes and the signature, or every issue naming its field.
 * `approvals` is how many approvals the option was offered with: a wallet
 * answers the actions it was last given, and an allowance that came since
 * leaves fewer (down to none) when the actions are fetched again.
 */
export const confirmResultsOf = (
  results: ReadonlyArray<WalletResult>,
  approvals = 0
): Either.Either<ConfirmResults, ReadonlyArray<FieldIssue>> => {
  if (results.length < 1 || results.length > approvals + 1) {
    return Either.left([
      {
        field: "results",
        message:
          approvals === 0
            ? `must hold one result per action of the option (1), not ${results.length}`
            : `must hold one result per action of the option (1 to ${approvals + 1}: the approvals' transaction hashes, then the signature), not ${results.length}`
      }
    ])
  }
  const issues: Array<FieldIssue> = []
  results.forEach((result, i) => {
    if (result.type !== "walletRpc")
      issues.push({ field: `results.${i}.type`, message: 'must be "walletRpc"' })
  })
  const hashes = results.slice(0, -1).map((r) => r.data[0])
  hashes.forEach((hash, i) => {
    if (typeof hash !== "string" || !TRANSACTION_HASH.test(hash)) {
      issues.push({
        field: `results.${i}.data.0`,
        message:
          "must be the eth_sendTransaction result: the transaction's hash, 0x and 64 hex digits"
      })
    }
  })
  if (issues.length > 0) return Either.left(issues)
  const last = results.length - 1
  return Either.map(signatureIn(results[last]!, last), (signature) => ({
    approvals: hashes as ReadonlyArray<Hex>,
    signature
  }))
}

/** The signature a result carries, checked. */
const signatureIn = (
  result: WalletResult,
  index: number
): Either.Either<Hex, ReadonlyArray<FieldIssue>> => {
  const field = `results.${index}.data.0`
  const signature = result.data[0]
  // Any length a wallet signs with: 65 bytes for a key pair (64 in EIP-2098's compact form), an
  // account's own for a smart account (ERC-1271), more with an ERC-6492 wrapper; bounded, as
  // the whole confirm is.
  if (typeof signature !== "string" || !isHex(signature, { strict: true })) {
    return Either.left([
      {
        field,
        message: "must be the eth_signTypedData_v4 signature: 0x and hex digits"
      }
    ])
  }
  if (signature.length % 2 !== 0 || size(signature) === 0) {
    return Either.left([
      {
        field,
        message: "must be the eth_signTypedData_v4 signature: whole bytes, at least one"
      }
    ])
  }
  if (size(signature) > MAX_SIGNATURE_BYTES) {
    return Either.left([
      {
        field,
        message: `must be at most ${MAX_SIGNATURE_BYTES} bytes, not ${size(signature)}`
      }
    ])
  }
  return Either.right(signature)
}

/**
 * A native option's result: its one action is the transfer of the coin
 * (`eth_sendTransaction`), and its data the transaction's hash, lowercased
 * (a hash is claimed by one payment only, whatever its case).
 */
export const nativeResultOf = (
  results: ReadonlyArray<WalletResult>
): Either.Either<Hex, ReadonlyArray<FieldIssue>> => {
  if (results.length !== 1) {
    return Either.left([
      {
        field: "results",
        message: `must hold one result per action of the option (1: the transfer's transaction hash), not ${results.length}`
      }
    ])
  }
  const result = results[0]!
  if (result.type !== "walletRpc")
    return Either.left([{ field: "results.0.type", message: 'must be "walletRpc"' }])
  const hash = result.data[0]
  if (typeof hash !== "string" || !TRANSACTION_HASH.test(hash)) {
    return Either.left([
      {
        field: "results.0.data.0",
        message:
          "must be the eth_sendTransaction result: the transaction's hash, 0x and 64 hex digits"
      }
    ])
  }
  return Either.right(hash.toLowerCase() as Hex)
}
