/**
 * The calldata of the token's `receiveWithAuthorization`, in the form the
 * signature fits (Chain.ts's `receiveCall`).
 */
import type { ReceiveAuthorization } from "@pay/core"
import { encodeFunctionData, type Hex, hexToNumber, size, slice } from "viem"
import { eip3009TokenAbi } from "./Eip3009Abi.js"

/**
 * 65 bytes: the `v, r, s` form every FiatToken version has, so a key pair's
 * signature pays on tokens older than v2.2 too. Any other length: v2.2's
 * `bytes signature` form, which the token hands to the account's ERC-1271
 * check as it is.
 */
export const receiveCalldata = (auth: ReceiveAuthorization, signature: Hex): Hex => {
  const head = [
    auth.from,
    auth.to,
    auth.value,
    auth.validAfter,
    auth.validBefore,
    auth.nonce
  ] as const
  if (size(signature) !== 65) {
    return encodeFunctionData({
      abi: eip3009TokenAbi,
      functionName: "receiveWithAuthorization",
      args: [...head, signature]
    })
  }
  // The token packs r, s, v back into the 65 bytes it checks: v goes as signed, but for
  // 0 and 1 (a y-parity), which a key pair's signature means as 27 and 28 and tokens take
  // only so. Any other v (a Safe's 31 and 32 for eth_sign) is the account's to read.
  const v = hexToNumber(slice(signature, 64, 65))
  return encodeFunctionData({
    abi: eip3009TokenAbi,
    functionName: "receiveWithAuthorization",
    args: [...head, v < 2 ? v + 27 : v, slice(signature, 0, 32), slice(signature, 32, 64)]
  })
}
