/**
 * The sandbox's Permit2 on the real in-process chain, against Uniswap's own
 * SDK: typed data built by `@uniswap/permit2-sdk` with the engine's witness,
 * signed with viem, moves USDT (no return value) and DAI through
 * `permitWitnessTransferFrom` at Permit2's canonical address, and each bad
 * permit fails with Permit2's error. An ERC-1271 payer (a Safe, an EIP-7702
 * account) pays the same way.
 */
import {
  MaxSigDeadline,
  type PermitTransferFromData,
  PERMIT2_ADDRESS as SDK_PERMIT2_ADDRESS,
  SignatureTransfer,
  type Witness
} from "@uniswap/permit2-sdk"
import { Effect, Exit, Scope } from "effect"
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  type Hex,
  hashDomain,
  hashStruct,
  hashTypedData,
  keccak256,
  maxUint256,
  pad,
  parseSignature,
  serializeCompactSignature,
  signatureToCompactSignature,
  type TypedDataDefinition,
  toHex
} from "viem"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PERMIT2_ADDRESS, SANDBOX_PERMIT2_DEPLOYED_ADDRESS } from "./Keys.js"
import { make, type SandboxChainService } from "./SandboxChain.js"
import { SandboxPermit2 } from "./SandboxPermit2.artifact.js"
import { Safe as SafeSingleton } from "./SmartAccounts.artifact.js"

let chain: SandboxChainService
let scope: Scope.CloseableScope

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  chain = await Effect.runPromise(Scope.extend(make(), scope))
}, 60_000)

afterAll(() => (scope === undefined ? undefined : Effect.runPromise(Scope.close(scope, Exit.void))))

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const CHAIN_ID = 31337

interface Payment {
  readonly paymentId: string
  readonly optionId: string
}

/** The engine's witness, as it gives it to the SDK. */
const paymentWitness = (payment: Payment): Witness => ({
  witnessTypeName: "Payment",
  witnessType: {
    Payment: [
      { name: "paymentId", type: "string" },
      { name: "optionId", type: "string" }
    ]
  },
  witness: { ...payment }
})

const WITNESS_TYPE_STRING =
  "Payment witness)Payment(string paymentId,string optionId)TokenPermissions(address token,uint256 amount)"

/** The witness's EIP-712 struct hash, as the engine computes it for the contract call. */
const witnessHash = (payment: Payment): Hex =>
  keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, { type: "bytes32" }, { type: "bytes32" }],
      [
        keccak256(toHex("Payment(string paymentId,string optionId)")),
        keccak256(toHex(payment.paymentId)),
        keccak256(toHex(payment.optionId))
      ]
    )
  )

/** ethers' BigNumbers (what the SDK's constants are) to bigints, all the way down. */
const toBigInts = (value: unknown): unknown => {
  if (typeof value === "object" && value !== null && "_isBigNumber" in value) {
    return BigInt(String(value))
  }
  if (Array.isArray(value)) return value.map(toBigInts)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toBigInts(v)]))
  }
  return value
}

/** The SDK's typed data as viem signs it. */
const toViem = (data: PermitTransferFromData, primaryType: string): TypedDataDefinition => {
  const definition = {
    domain: toBigInts(data.domain),
    types: data.types,
    primaryType,
    message: toBigInts(data.values)
  }
  // ethers' field lists are viem's ({ name, type }): only the declared types differ.
  return definition as unknown as TypedDataDefinition
}

interface Permit {
  readonly token: Address
  readonly amount: bigint
  readonly spender: Address
  readonly nonce: bigint
  /** A bigint, or an ethers BigNumber of the SDK's (MaxSigDeadline). */
  readonly deadline: bigint | typeof MaxSigDeadline
}

// A fresh object each time: the SDK writes the witness into the permit it is given.
const sdkPermit = (p: Permit) => ({
  permitted: { token: p.token, amount: p.amount },
  spender: p.spender,
  nonce: p.nonce,
  deadline: p.deadline
})

/** The permit with the engine's witness, built by the SDK and signed by `signer`. */
const signPermit = async (
  signer: { readonly signTypedData: (typed: TypedDataDefinition) => Promise<Hex> },
  permit: Permit,
  payment: Payment
) => {
  const data = SignatureTransfer.getPermitData(
    sdkPermit(permit),
    SDK_PERMIT2_ADDRESS,
    CHAIN_ID,
    paymentWitness(payment)
  ) as PermitTransferFromData
  const typed = toViem(data, "PermitWitnessTransferFrom")
  const sdkHash = SignatureTransfer.hash(
    sdkPermit(permit),
    SDK_PERMIT2_ADDRESS,
    CHAIN_ID,
    paymentWitness(payment)
  )
  return { typed, sdkHash, signature: await signer.signTypedData(typed) }
}

const permit2 = { address: PERMIT2_ADDRESS, abi: SandboxPermit2.abi } as const

const witnessArgs = (
  permit: Permit,
  to: Address,
  requestedAmount: bigint,
  owner: Address,
  payment: Payment,
  signature: Hex
) =>
  [
    {
      permitted: { token: permit.token, amount: permit.amount },
      nonce: permit.nonce,
      deadline: BigInt(String(permit.deadline))
    },
    { to, requestedAmount },
    owner,
    witnessHash(payment),
    WITNESS_TYPE_STRING,
    signature
  ] as const

/** `permitWitnessTransferFrom` as `spender` would send it: "ok", or the custom error's name and args. */
const simulateWitness = (from: Address, args: ReturnType<typeof witnessArgs>) =>
  chain.publicClient
    .simulateContract({
      ...permit2,
      account: from,
      functionName: "permitWitnessTransferFrom",
      args
    })
    .then(
      () => ({ name: "ok", args: [] as ReadonlyArray<unknown> }),
      (e: unknown) => {
        const revert =
          e instanceof BaseError
            ? e.walk((c) => c instanceof ContractFunctionRevertedError)
            : undefined
        if (revert instanceof ContractFunctionRevertedError) {
          return {
            name: revert.data?.errorName ?? revert.reason ?? "reverted",
            args: revert.data?.args ?? []
          }
        }
        throw e
      }
    )

const newKey = () => privateKeyToAccount(generatePrivateKey())
let paymentCount = 0
const newPayment = (): Payment => {
  paymentCount++
  return { paymentId: `pay_${paymentCount}_${Date.now()}`, optionId: `opt_${paymentCount}` }
}
const randomNonce = () => BigInt(`0x${generatePrivateKey().slice(2, 20)}`)

const tokenOf = (symbol: "USDT" | "DAI") => {
  const token = chain.tokens.find((t) => t.symbol === symbol)
  if (token === undefined) throw new Error(`no ${symbol}`)
  return token
}

const balanceOf = (token: Address, account: Address) =>
  chain.publicClient.readContract({
    address: token,
    abi: chain.tokens[1].abi,
    functionName: "balanceOf",
    args: [account]
  })

const latest = () => chain.publicClient.getBlock().then((b) => b.timestamp)

const mined = async (hash: Hex) => {
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash })
  expect(receipt.status).toBe("success")
  return receipt
}

/** A buyer with ether for gas, `amount` of the token, and Permit2 approved for all of it. */
const fundedBuyer = async (symbol: "USDT" | "DAI", amount: bigint) => {
  const buyer = newKey()
  await run(chain.faucet(buyer.address, 10n ** 17n, "ETH"))
  await run(chain.faucet(buyer.address, amount, symbol))
  await approvePermit2(buyer, tokenOf(symbol).address)
  return buyer
}

const approvePermit2 = async (owner: PrivateKeyAccount, token: Address) => {
  const hash = await chain.collector.walletClient.writeContract({
    account: owner,
    address: token,
    abi: chain.tokens[1].abi,
    functionName: "approve",
    args: [PERMIT2_ADDRESS, maxUint256]
  })
  await mined(hash)
}

describe("the sandbox's Permit2", () => {
  it("is at Permit2's canonical address, the SDK's, with Permit2's domain computed there", async () => {
    expect(PERMIT2_ADDRESS).toBe(SDK_PERMIT2_ADDRESS)
    const [canonical, deployed] = await Promise.all(
      [PERMIT2_ADDRESS, SANDBOX_PERMIT2_DEPLOYED_ADDRESS].map((address) =>
        chain.publicClient.readContract({ ...permit2, address, functionName: "DOMAIN_SEPARATOR" })
      )
    )
    expect(canonical).toBe(
      hashDomain({
        domain: { name: "Permit2", chainId: BigInt(CHAIN_ID), verifyingContract: PERMIT2_ADDRESS },
        types: {
          EIP712Domain: [
            { name: "name", type: "string" },
            { name: "chainId", type: "uint256" },
            { name: "verifyingContract", type: "address" }
          ]
        }
      })
    )
    // The same code at its deployed address computes that address's domain: nothing was fixed
    // at deployment.
    expect(deployed).not.toBe(canonical)
    expect(chain.permit2).toBe(PERMIT2_ADDRESS)
    expect(chain.description.permit2).toBe(`eip155:31337:${PERMIT2_ADDRESS}`)
  })

  it("hashes the SDK's witness typed data as viem does, the witness as the engine does", async () => {
    const payment = { paymentId: "pay_abc", optionId: "opt_1" }
    const permit: Permit = {
      token: tokenOf("USDT").address,
      amount: 1_000_000n,
      spender: chain.collector.address,
      nonce: 7n,
      deadline: 1_900_000_000n
    }
    const { typed, sdkHash } = await signPermit(newKey(), permit, payment)
    expect(hashTypedData(typed)).toBe(sdkHash)
    expect(
      hashStruct({
        data: payment,
        primaryType: "Payment",
        types: paymentWitness(payment).witnessType as unknown as TypedDataDefinition["types"]
      })
    ).toBe(witnessHash(payment))
  })

  it.each(["USDT", "DAI"] as const)(
    "moves %s with the SDK's witness permit, signed with viem, sent by the spender",
    async (symbol) => {
      const token = tokenOf(symbol)
      const unit = 10n ** BigInt(token.decimals)
      const buyer = await fundedBuyer(symbol, 50n * unit)
      const merchant = newKey().address
      const payment = newPayment()
      const permit: Permit = {
        token: token.address,
        amount: 20n * unit,
        spender: chain.collector.address,
        nonce: randomNonce(),
        // DAI's permit never expires: the SDK's own BigNumber, converted like every value.
        deadline: symbol === "DAI" ? MaxSigDeadline : (await latest()) + 600n
      }
      const { typed, sdkHash, signature } = await signPermit(buyer, permit, payment)
      expect(hashTypedData(typed)).toBe(sdkHash)

      const hash = await chain.collector.walletClient.writeContract({
        ...permit2,
        functionName: "permitWitnessTransferFrom",
        args: witnessArgs(permit, merchant, 15n * unit, buyer.address, payment, signature)
      })
      await mined(hash)
      expect(await balanceOf(token.address, buyer.address)).toBe(35n * unit)
      expect(await balanceOf(token.address, merchant)).toBe(15n * unit)
      const word = await chain.publicClient.readContract({
        ...permit2,
        functionName: "nonceBitmap",
        args: [buyer.address, permit.nonce >> 8n]
      })
      expect(word).toBe(1n << (permit.nonce & 0xffn))

      // The same signature again: its nonce is spent.
      expect(
        await simulateWitness(
          chain.collector.address,
          witnessArgs(permit, merchant, 15n * unit, buyer.address, payment, signature)
        )
      ).toEqual({ name: "InvalidNonce", args: [] })
    }
  )

  it("refuses a permit for another witness, an expired one, too large an amount, another spender", async () => {
    const token = tokenOf("USDT")
    const buyer = await fundedBuyer("USDT", 10_000_000n)
    const merchant = newKey().address
    const payment = newPayment()
    const now = await latest()
    const permit: Permit = {
      token: token.address,
      amount: 5_000_000n,
      spender: chain.collector.address,
      nonce: randomNonce(),
      deadline: now + 600n
    }
    const { signature } = await signPermit(buyer, permit, payment)
    const collector = chain.collector.address
    const args = (p: Permit, amount: bigint, forPayment: Payment, sig: Hex = signature) =>
      witnessArgs(p, merchant, amount, buyer.address, forPayment, sig)

    expect(await simulateWitness(collector, args(permit, 5_000_000n, payment))).toEqual({
      name: "ok",
      args: []
    })
    // Signed for one payment, presented for another: the hash recovers someone else.
    expect(
      await simulateWitness(
        collector,
        args(permit, 5_000_000n, { ...payment, paymentId: `${payment.paymentId}_other` })
      )
    ).toEqual({ name: "InvalidSigner", args: [] })
    expect(await simulateWitness(collector, args(permit, 5_000_001n, payment))).toEqual({
      name: "InvalidAmount",
      args: [5_000_000n]
    })
    // Signed for the collector, sent by someone else.
    expect(await simulateWitness(newKey().address, args(permit, 5_000_000n, payment))).toEqual({
      name: "InvalidSigner",
      args: []
    })

    const expired: Permit = { ...permit, nonce: randomNonce(), deadline: now - 10n }
    const late = await signPermit(buyer, expired, payment)
    expect(await simulateWitness(collector, args(expired, 1n, payment, late.signature))).toEqual({
      name: "SignatureExpired",
      args: [now - 10n]
    })
    expect(await balanceOf(token.address, buyer.address)).toBe(10_000_000n)
  })

  it("checks signatures as Permit2: EIP-2098's 64 bytes, bad lengths, a zero recovery", async () => {
    const token = tokenOf("DAI")
    const buyer = await fundedBuyer("DAI", 10n ** 18n)
    const payment = newPayment()
    const permit: Permit = {
      token: token.address,
      amount: 10n ** 18n,
      spender: chain.collector.address,
      nonce: randomNonce(),
      deadline: (await latest()) + 600n
    }
    const { signature } = await signPermit(buyer, permit, payment)
    const args = (sig: Hex) =>
      witnessArgs(permit, newKey().address, 1n, buyer.address, payment, sig)
    const compact = serializeCompactSignature(
      signatureToCompactSignature(parseSignature(signature))
    )
    expect(compact.length).toBe(2 + 128)
    expect(await simulateWitness(chain.collector.address, args(compact))).toEqual({
      name: "ok",
      args: []
    })
    expect(await simulateWitness(chain.collector.address, args(`${signature}00`))).toEqual({
      name: "InvalidSignatureLength",
      args: []
    })
    // r = 0: ecrecover finds no one.
    const nobody = encodePacked(["bytes32", "bytes32", "uint8"], [pad("0x"), pad("0x01"), 27])
    expect(await simulateWitness(chain.collector.address, args(nobody))).toEqual({
      name: "InvalidSignature",
      args: []
    })
  })

  it("takes no signature-less permit: without a witness, after the owner invalidates the nonce, without an allowance", async () => {
    const token = tokenOf("DAI")
    const buyer = await fundedBuyer("DAI", 10n ** 18n)
    const merchant = newKey().address
    const now = await latest()
    const plain = async (nonce: bigint) => {
      const permit: Permit = {
        token: token.address,
        amount: 10n ** 17n,
        spender: chain.collector.address,
        nonce,
        deadline: now + 600n
      }
      const data = SignatureTransfer.getPermitData(
        sdkPermit(permit),
        SDK_PERMIT2_ADDRESS,
        CHAIN_ID
      ) as PermitTransferFromData
      const signature = await buyer.signTypedData(toViem(data, "PermitTransferFrom"))
      return [
        { permitted: { token: token.address, amount: permit.amount }, nonce, deadline: now + 600n },
        { to: merchant, requestedAmount: permit.amount },
        buyer.address,
        signature
      ] as const
    }
    // permitTransferFrom, the witness-less form.
    await mined(
      await chain.collector.walletClient.writeContract({
        ...permit2,
        functionName: "permitTransferFrom",
        args: await plain(1n)
      })
    )
    expect(await balanceOf(token.address, merchant)).toBe(10n ** 17n)

    // The owner invalidates nonces 256 to 511 but 300: 300 still works, 301 not.
    const mask = maxUint256 ^ (1n << 44n)
    const invalidated = await mined(
      await chain.collector.walletClient.writeContract({
        ...permit2,
        account: buyer,
        functionName: "invalidateUnorderedNonces",
        args: [1n, mask]
      })
    )
    expect(invalidated.logs).toHaveLength(1)
    expect(
      await chain.publicClient.readContract({
        ...permit2,
        functionName: "nonceBitmap",
        args: [buyer.address, 1n]
      })
    ).toBe(mask)
    const refused = (args: Awaited<ReturnType<typeof plain>>) =>
      chain.publicClient
        .simulateContract({
          ...permit2,
          account: chain.collector.address,
          functionName: "permitTransferFrom",
          args
        })
        .then(
          () => "ok",
          (e: BaseError) =>
            (
              e.walk(
                (c) => c instanceof ContractFunctionRevertedError
              ) as ContractFunctionRevertedError
            ).data?.errorName
        )
    expect(await refused(await plain(300n))).toBe("ok")
    expect(await refused(await plain(301n))).toBe("InvalidNonce")

    // Without an allowance the token's transferFrom reverts: Permit2 reports it.
    const unapproved = newKey()
    await run(chain.faucet(unapproved.address, 10n ** 18n, "DAI"))
    const permit: Permit = {
      token: token.address,
      amount: 1n,
      spender: chain.collector.address,
      nonce: 1n,
      deadline: now + 600n
    }
    const payment = newPayment()
    const { signature } = await signPermit(unapproved, permit, payment)
    expect(
      await simulateWitness(
        chain.collector.address,
        witnessArgs(permit, merchant, 1n, unapproved.address, payment, signature)
      )
    ).toEqual({ name: "TransferFailed", args: [] })
  })
})

describe("an ERC-1271 payer through Permit2", () => {
  it("a one-owner Safe pays USDT with its SafeMessage signature", async () => {
    const token = tokenOf("USDT")
    const owner = newKey()
    await run(chain.faucet(owner.address, 10n ** 17n, "ETH"))
    const safe = await run(chain.smartAccount({ kind: "safe", owner }))
    await run(chain.faucet(safe.address, 30_000_000n, "USDT"))
    // The Safe approves Permit2 through execTransaction, the owner sending it: a threshold-1
    // Safe takes its sender's "approved hash" signature (r = the owner, s = 0, v = 1).
    const approve = encodeFunctionData({
      abi: token.abi,
      functionName: "approve",
      args: [PERMIT2_ADDRESS, maxUint256]
    })
    const zero = "0x0000000000000000000000000000000000000000" as const
    await mined(
      await chain.collector.walletClient.writeContract({
        account: owner,
        address: safe.address,
        abi: SafeSingleton.abi,
        functionName: "execTransaction",
        args: [
          token.address,
          0n,
          approve,
          0,
          0n,
          0n,
          0n,
          zero,
          zero,
          encodePacked(["bytes32", "bytes32", "uint8"], [pad(owner.address), pad("0x"), 1])
        ]
      })
    )
    const merchant = newKey().address
    const payment = newPayment()
    const permit: Permit = {
      token: token.address,
      amount: 12_000_000n,
      spender: chain.collector.address,
      nonce: randomNonce(),
      deadline: (await latest()) + 600n
    }
    const { signature, typed } = await signPermit(safe, permit, payment)
    // The owner's signature of a SafeMessage under the Safe's domain, not of the permit itself.
    expect(signature).not.toBe(await owner.signTypedData(typed))
    await mined(
      await chain.collector.walletClient.writeContract({
        ...permit2,
        functionName: "permitWitnessTransferFrom",
        args: witnessArgs(permit, merchant, 12_000_000n, safe.address, payment, signature)
      })
    )
    expect(await balanceOf(token.address, safe.address)).toBe(18_000_000n)
    expect(await balanceOf(token.address, merchant)).toBe(12_000_000n)
  })

  it("an EIP-7702 account pays DAI through its delegate's isValidSignature, and a stranger's signature is InvalidContractSignature", async () => {
    const token = tokenOf("DAI")
    const owner = newKey()
    await run(chain.faucet(owner.address, 10n ** 17n, "ETH"))
    const account = await run(chain.smartAccount({ kind: "7702", owner }))
    await run(chain.faucet(account.address, 10n ** 18n, "DAI"))
    await approvePermit2(owner, token.address)
    const merchant = newKey().address
    const payment = newPayment()
    const permit: Permit = {
      token: token.address,
      amount: 10n ** 18n,
      spender: chain.collector.address,
      nonce: randomNonce(),
      deadline: (await latest()) + 600n
    }
    const stranger = await signPermit(newKey(), permit, payment)
    expect(
      await simulateWitness(
        chain.collector.address,
        witnessArgs(permit, merchant, 10n ** 18n, account.address, payment, stranger.signature)
      )
    ).toEqual({ name: "InvalidContractSignature", args: [] })
    const { signature } = await signPermit(account, permit, payment)
    await mined(
      await chain.collector.walletClient.writeContract({
        ...permit2,
        functionName: "permitWitnessTransferFrom",
        args: witnessArgs(permit, merchant, 10n ** 18n, account.address, payment, signature)
      })
    )
    expect(await balanceOf(token.address, merchant)).toBe(10n ** 18n)
  })
})
