/**
 * What the engine hands a wallet to sign for a Permit2 token is what
 * Uniswap's own SDK builds: the same EIP-712 hash for the same permit and
 * witness (so any wallet or tool that follows the SDK agrees with the engine),
 * through the JSON a wallet receives too; and the collector's call carries
 * the signature as Permit2's `ecrecover` takes it.
 */
import {
  PERMIT2_ADDRESS,
  type Permission,
  signingRequest,
  typedDataFromJson,
  typedDataJson
} from "@pay/core"
import { SignatureTransfer } from "@uniswap/permit2-sdk"
import {
  decodeFunctionData,
  type Hex,
  hashTypedData,
  hexToBigInt,
  isAddressEqual,
  type TypedDataDefinition
} from "viem"
import { describe, expect, it } from "vitest"
import { nonceBit, permit2Abi, permit2Calldata, witnessHash } from "./Permit2Call.js"

const permission: Extract<Permission, { kind: "permit2" }> = {
  kind: "permit2",
  authorization: {
    from: "0x00000000000000000000000000000000000000b0",
    to: "0x00000000000000000000000000000000000000C0",
    value: 10_500_000n,
    validAfter: 0n,
    validBefore: 1_900_000_000n,
    nonce: `0x${"f1".repeat(32)}`
  },
  token: "0xdAC17F958D2ee523a2206206994597C13D831ec7",
  permit2: PERMIT2_ADDRESS,
  witness: { paymentId: "pay_0VcLJSzwEOM9uJjo8lsl", optionId: "opt_0VcLJVUjS3CepFrH5Z03" }
}

/** The same permit and witness as the SDK takes them. */
const sdkHash = (chainId: number) =>
  SignatureTransfer.hash(
    {
      permitted: { token: permission.token, amount: permission.authorization.value },
      spender: permission.authorization.to,
      nonce: hexToBigInt(permission.authorization.nonce),
      deadline: permission.authorization.validBefore
    },
    PERMIT2_ADDRESS,
    chainId,
    {
      witnessTypeName: "Payment",
      witnessType: {
        Payment: [
          { name: "paymentId", type: "string" },
          { name: "optionId", type: "string" }
        ]
      },
      witness: permission.witness
    }
  )

describe("the Permit2 typed data", () => {
  it.each([1, 8453, 31337])("hashes as @uniswap/permit2-sdk's on chain %i", (chainId) => {
    const request = signingRequest(permission, BigInt(chainId), undefined)
    const ours = hashTypedData(request as TypedDataDefinition)
    expect(ours).toBe(sdkHash(chainId))
    // And so does what the wallet receives, read back as a wallet reads it.
    expect(hashTypedData(typedDataFromJson(typedDataJson(request)))).toBe(ours)
  })

  it("changes with the witness: another payment's permit is another hash", () => {
    const other = { ...permission, witness: { ...permission.witness, paymentId: "pay_other" } }
    expect(hashTypedData(signingRequest(other, 1n, undefined) as TypedDataDefinition)).not.toBe(
      sdkHash(1)
    )
  })
})

describe("the collector's call", () => {
  const signature = (v: number): Hex =>
    `0x${"11".repeat(32)}${"22".repeat(32)}${v.toString(16).padStart(2, "0")}`
  const signatureIn = (data: Hex) => decodeFunctionData({ abi: permit2Abi, data }).args[5] as Hex

  it("takes all the permitted amount to the collector, with the engine's witness", () => {
    const { args } = decodeFunctionData({
      abi: permit2Abi,
      data: permit2Calldata(permission, signature(27))
    })
    const [permit, details, owner, witness, witnessType] = args as unknown as readonly [
      { permitted: { token: Hex; amount: bigint }; nonce: bigint; deadline: bigint },
      { to: Hex; requestedAmount: bigint },
      Hex,
      Hex,
      string
    ]
    expect(isAddressEqual(permit.permitted.token, permission.token)).toBe(true)
    expect(permit.permitted.amount).toBe(10_500_000n)
    expect(permit.nonce).toBe(hexToBigInt(permission.authorization.nonce))
    expect(permit.deadline).toBe(1_900_000_000n)
    expect(isAddressEqual(details.to, permission.authorization.to)).toBe(true)
    expect(details.requestedAmount).toBe(10_500_000n)
    expect(isAddressEqual(owner, permission.authorization.from)).toBe(true)
    expect(witness).toBe(witnessHash(permission.witness))
    expect(witnessType).toBe(
      "Payment witness)Payment(string paymentId,string optionId)TokenPermissions(address token,uint256 amount)"
    )
  })

  it("sends a y-parity of 0 or 1 as 27 or 28, and any other signature as it is", () => {
    expect(signatureIn(permit2Calldata(permission, signature(0))).endsWith("1b")).toBe(true)
    expect(signatureIn(permit2Calldata(permission, signature(1))).endsWith("1c")).toBe(true)
    expect(signatureIn(permit2Calldata(permission, signature(28)))).toBe(signature(28))
    const account: Hex = `0x${"ab".repeat(97)}`
    expect(signatureIn(permit2Calldata(permission, account))).toBe(account)
  })
})

describe("Permit2's unordered nonces", () => {
  it("puts a nonce in word nonce >> 8, at bit nonce & 255", () => {
    expect(nonceBit("0x0000000000000000000000000000000000000000000000000000000000000000")).toEqual({
      wordPos: 0n,
      bit: 1n
    })
    expect(nonceBit("0x00000000000000000000000000000000000000000000000000000000000001ff")).toEqual({
      wordPos: 1n,
      bit: 1n << 255n
    })
  })
})
