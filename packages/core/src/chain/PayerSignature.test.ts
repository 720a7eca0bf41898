import { Either } from "effect"
import {
  type Hex,
  parseSignature,
  serializeErc6492Signature,
  serializeSignature,
  signatureToCompactSignature,
  size
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { confirmResultsOf } from "../gateway/ConfirmInput.js"
import { accountSignatureOf, MAX_SIGNATURE_BYTES, parsePayerSignature } from "./PayerSignature.js"

const key = privateKeyToAccount(generatePrivateKey())
const ecdsa = await key.signMessage({ message: "a buyer's authorization" })
const factory = "0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820ec67"
const factoryData: Hex =
  "0x1688f0b900000000000000000000000000000000000000000000000000000000000000aa"

describe("parsePayerSignature", () => {
  it("65 bytes: ecdsa, as sent", () => {
    expect(parsePayerSignature(ecdsa)).toEqual({ kind: "ecdsa", signature: ecdsa })
  })

  it("64 bytes (EIP-2098 compact): ecdsa, widened to the same 65 bytes", () => {
    const compact = signatureToCompactSignature(parseSignature(ecdsa))
    const short = `${compact.r}${compact.yParityAndS.slice(2)}` as Hex
    expect(size(short)).toBe(64)
    const parsed = parsePayerSignature(short)
    expect(parsed).toEqual({ kind: "ecdsa", signature: serializeSignature(parseSignature(ecdsa)) })
    expect(accountSignatureOf(short)).toBe(serializeSignature(parseSignature(ecdsa)))
  })

  it("any other length: a contract's (ERC-1271), as sent", () => {
    const safeTwoOwners = `${ecdsa}${ecdsa.slice(2)}` as Hex
    expect(parsePayerSignature(safeTwoOwners)).toEqual({
      kind: "contract",
      signature: safeTwoOwners
    })
    expect(parsePayerSignature("0x12")).toEqual({ kind: "contract", signature: "0x12" })
  })

  it("ERC-6492: counterfactual, with its factory, calldata and inner signature", () => {
    const wrapped = serializeErc6492Signature({
      address: factory,
      data: factoryData,
      signature: ecdsa
    })
    const parsed = parsePayerSignature(wrapped)
    expect(parsed).toEqual({
      kind: "counterfactual",
      signature: ecdsa,
      wrapped,
      deployment: { factory, factoryData }
    })
    expect(accountSignatureOf(wrapped)).toBe(ecdsa)
  })

  it("an ERC-6492 suffix over bytes that are no wrapper: a reason, not a throw", () => {
    const magic = "6492649264926492649264926492649264926492649264926492649264926492"
    const parsed = parsePayerSignature(`0x1234${magic}`)
    expect(typeof parsed).toBe("string")
    expect(accountSignatureOf(`0x1234${magic}`)).toBe(`0x1234${magic}`)
  })
})

describe("confirmResultsOf (the confirm's results)", () => {
  const result = (signature: unknown) => [{ type: "walletRpc", data: [signature] }]
  const signatureOf = (results: ReturnType<typeof result>) =>
    Either.map(confirmResultsOf(results), (r) => r.signature)
  const field = (signature: unknown) => {
    const checked = signatureOf(result(signature))
    return Either.isLeft(checked) ? checked.left[0] : undefined
  }

  it("takes any whole-byte hex signature up to the bound", () => {
    const longest = `0x${"ab".repeat(MAX_SIGNATURE_BYTES)}` as Hex
    expect(signatureOf(result(longest))).toEqual(Either.right(longest))
    expect(signatureOf(result(ecdsa))).toEqual(Either.right(ecdsa))
  })

  it("refuses one over the bound, odd digits, no bytes and non-hex, naming the field", () => {
    expect(field(`0x${"ab".repeat(MAX_SIGNATURE_BYTES + 1)}`)).toEqual({
      field: "results.0.data.0",
      message: `must be at most ${MAX_SIGNATURE_BYTES} bytes, not ${MAX_SIGNATURE_BYTES + 1}`
    })
    for (const bad of ["0x123", "0x", "0xzz", "1234", 42, null]) {
      expect(field(bad)?.field).toBe("results.0.data.0")
    }
  })

  const hash = `0x${"12".repeat(32)}` as Hex
  const rpc = (data: unknown) => ({ type: "walletRpc", data: [data] })

  it("takes the approvals' hashes before the signature, up to the option's approvals", () => {
    expect(confirmResultsOf([rpc(hash), rpc(hash), rpc(ecdsa)], 2)).toEqual(
      Either.right({ approvals: [hash, hash], signature: ecdsa })
    )
    // An allowance that came since the options: the wallet was given the signature alone.
    expect(confirmResultsOf([rpc(ecdsa)], 2)).toEqual(
      Either.right({ approvals: [], signature: ecdsa })
    )
  })

  it("refuses more results than actions, and a hash that is none, naming the field", () => {
    const over = confirmResultsOf([rpc(hash), rpc(ecdsa)], 0)
    expect(Either.isLeft(over) && over.left[0]?.field).toBe("results")
    const tooMany = confirmResultsOf([rpc(hash), rpc(hash), rpc(ecdsa)], 1)
    expect(Either.isLeft(tooMany) && tooMany.left[0]?.message).toMatch(/1 to 2/)
    const notHash = confirmResultsOf([rpc("0x1234"), rpc(ecdsa)], 1)
    expect(Either.isLeft(notHash) && notHash.left[0]?.field).toBe("results.0.data.0")
    const notRpc = confirmResultsOf([{ type: "other", data: [hash] }, rpc(ecdsa)], 1)
    expect(Either.isLeft(notRpc) && notRpc.left[0]?.field).toBe("results.0.type")
    const badSignature = confirmResultsOf([rpc(hash), rpc("0xzz")], 1)
    expect(Either.isLeft(badSignature) && badSignature.left[0]?.field).toBe("results.1.data.0")
  })
})
