/**
 * Uniswap's Permit2, as the collector calls it: `permitWitnessTransferFrom`
 * of a buyer's signed transfer to the collector (Chain.ts's `receiveCall` for
 * a `permit2` permission), and the nonce bitmap that says whether a permit's
 * nonce is used. The witness is the payment the permit is bound to
 * (core's chain/Permission.ts): its hash here is what the buyer's typed data
 * hashes it to.
 */
import {
  PAYMENT_WITNESS_TYPE,
  PAYMENT_WITNESS_TYPE_STRING,
  type PaymentWitness,
  type Permission
} from "@pay/core"
import {
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  hexToBigInt,
  hexToNumber,
  keccak256,
  parseAbi,
  size,
  slice,
  stringToHex,
  toHex
} from "viem"

export const permit2Abi = parseAbi([
  "struct TokenPermissions { address token; uint256 amount; }",
  "struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }",
  "struct SignatureTransferDetails { address to; uint256 requestedAmount; }",
  "function permitWitnessTransferFrom(PermitTransferFrom permit, SignatureTransferDetails transferDetails, address owner, bytes32 witness, string witnessTypeString, bytes signature)",
  "function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)"
])

/** `keccak256("Payment(string paymentId,string optionId)")`. */
const PAYMENT_TYPEHASH = keccak256(stringToHex(PAYMENT_WITNESS_TYPE))

/** The witness as Permit2 takes it: the EIP-712 hash of the `Payment` struct. */
export const witnessHash = (witness: PaymentWitness): Hex =>
  keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, { type: "bytes32" }, { type: "bytes32" }],
      [
        PAYMENT_TYPEHASH,
        keccak256(stringToHex(witness.paymentId)),
        keccak256(stringToHex(witness.optionId))
      ]
    )
  )

/**
 * A key pair's 65 bytes with `v` as 27 or 28, as Permit2's `ecrecover`
 * takes it (some wallets sign with a y-parity of 0 or 1); any other
 * signature (64 bytes, an account's own) as it is.
 */
const permit2Signature = (signature: Hex): Hex => {
  if (size(signature) !== 65) return signature
  const v = hexToNumber(slice(signature, 64, 65))
  return v < 2 ? concat([slice(signature, 0, 64), toHex(v + 27, { size: 1 })]) : signature
}

type Permit2Permission = Extract<Permission, { readonly kind: "permit2" }>

/** The collector's call: the permitted amount, all of it, to the collector (the spender). */
export const permit2Calldata = (permission: Permit2Permission, signature: Hex): Hex => {
  const auth = permission.authorization
  return encodeFunctionData({
    abi: permit2Abi,
    functionName: "permitWitnessTransferFrom",
    args: [
      {
        permitted: { token: permission.token, amount: auth.value },
        nonce: hexToBigInt(auth.nonce),
        deadline: auth.validBefore
      },
      { to: auth.to, requestedAmount: auth.value },
      auth.from,
      witnessHash(permission.witness),
      PAYMENT_WITNESS_TYPE_STRING,
      permit2Signature(signature)
    ]
  })
}

/** Where a nonce's bit is in Permit2's unordered nonces: its word, and the bit in it. */
export const nonceBit = (nonce: Hex) => {
  const n = hexToBigInt(nonce)
  return { wordPos: n >> 8n, bit: 1n << (n & 0xffn) }
}
