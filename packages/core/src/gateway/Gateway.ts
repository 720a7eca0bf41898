/**
 * The wallet gateway (SPEC.md 4.4, WIRE.md sections 1 and 2): what a wallet
 * holding a buyer link can see and do. It offers options, hands out the
 * action to sign, and on confirm checks the signature against the option it
 * offered, moves the payment to `processing` (one confirm wins a race: the
 * state machine's compare-and-set) and queues the transfer as a durable job
 * in the same write; the chain work (chainwork/) submits and watches it.
 */
import { Effect, Either, Option } from "effect"
import { encodeFunctionData, type Hex, maxUint256, parseAbi, toHex } from "viem"
import { Chain, ChainUnavailable, networkOf, tokenOf } from "../chain/Chain.js"
import { parsePayerSignature } from "../chain/PayerSignature.js"
import { isSignedBy, permissionOf, signingRequest, typedDataJson } from "../chain/Permission.js"
import { ChainWork, newChainJob } from "../chainwork/ChainWork.js"
import { HttpConfig } from "../http/HttpConfig.js"
import { merchantPayable, merchantStatusOf } from "../merchants/Merchant.js"
import { MerchantStore } from "../merchants/MerchantStore.js"
import { SettlementStore } from "../merchants/SettlementStore.js"
import type { NewChainJob } from "../payments/ChainJob.js"
import {
  InvalidState,
  MerchantInactive,
  type Payment,
  PaymentExpired,
  type PaymentId
} from "../payments/Payment.js"
import {
  GatewayStore,
  MAX_OPTIONS_PER_PAYMENT,
  type OptionId,
  type PaymentOption
} from "../payments/PaymentOption.js"
import { effectiveStatus, type PaymentTransition } from "../payments/PaymentStateMachine.js"
import { Payments } from "../payments/Payments.js"
import { type PriceQuote, Prices } from "../pricing/Pricing.js"
import { EngineSecret } from "../secrets/EngineSecret.js"
import { type Caip10, chainOfCaip10 } from "../shared/Caip.js"
import { findCurrency } from "../shared/Currency.js"
import { InvalidInput } from "../shared/Errors.js"
import { makeIdBody } from "../shared/Ids.js"
import { makeSharedReads } from "../shared/SharedReads.js"
import { spanned } from "../shared/Spans.js"
import { TokenRegistry } from "../shared/TokenRegistry.js"
import {
  type CollectData,
  collectDataObject,
  collectedDataFromFields,
  type SubmittedField
} from "./CollectData.js"
import { COLLECT_TOKEN_PARAM, collectDataToken, isCollectDataToken } from "./CollectDataToken.js"
import { confirmResultsOf, nativeResultOf, type WalletResult } from "./ConfirmInput.js"
import { GatewayConfig, mustCollectData } from "./GatewayConfig.js"
import {
  ChainUnreachable,
  CollectDataForbidden,
  InsufficientBalance,
  QuoteExpired
} from "./GatewayErrors.js"
import {
  allowanceKey,
  balanceBudget,
  balanceKey,
  HOLDINGS_TTL_MS,
  rankOptions
} from "./Holdings.js"
import { noOptionsReason } from "./NoOptions.js"
import { offers, payableTokens } from "./Offers.js"

/** What a confirm writes: the payment to `processing`, paid by the option, with its collect job. */
const startProcessing = (
  option: PaymentOption,
  wallet: WalletIdentity | undefined,
  collect: NewChainJob
): PaymentTransition => ({
  _tag: "StartProcessing",
  tokenAmount: { asset: option.asset, value: option.authorization.value },
  buyer: {
    account: option.account,
    providerName: wallet?.name ?? null,
    providerIcon: wallet?.iconUrl ?? null
  },
  transaction: null,
  collect
})

/** The wallet app a request came from: its name and icon describe the buyer's wallet. */
export interface WalletIdentity {
  readonly name: string
  readonly iconUrl: string | null
}

/**
 * A `walletRpc` action, as wallets receive it: the typed data to sign
 * (`eth_signTypedData_v4`: the signer, the typed data as JSON), or a
 * transaction to send first (`eth_sendTransaction`: the transaction as JSON,
 * a Permit2 option's approval).
 */
export interface WalletAction {
  readonly type: "walletRpc"
  readonly data: {
    readonly chain_id: string
    readonly method: "eth_signTypedData_v4" | "eth_sendTransaction"
    readonly params: ReadonlyArray<string>
  }
}

const erc20Approve = parseAbi(["function approve(address spender, uint256 amount)"])

export interface ConfirmRequest {
  readonly optionId: string
  readonly results: ReadonlyArray<WalletResult>
  /** The buyer's data as wallets send it: every value a string. */
  readonly collectedData?: { readonly fields: ReadonlyArray<SubmittedField> } | null | undefined
}

const randomNonce = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)))

export class Gateway extends Effect.Service<Gateway>()("@pay/core/Gateway", {
  scoped: Effect.gen(function* () {
    const payments = yield* Payments
    const merchants = yield* MerchantStore
    const settlements = yield* SettlementStore
    const store = yield* GatewayStore
    const chain = yield* Chain
    const registry = yield* TokenRegistry
    const chainWork = yield* ChainWork
    const prices = yield* Prices
    const config = yield* GatewayConfig
    const { publicUrl } = yield* HttpConfig
    const secret = yield* EngineSecret
    const clock = yield* Effect.clock
    const now = () => new Date(clock.unsafeCurrentTimeMillis())
    // Balances and allowances read for options, shared for a few seconds (Holdings.ts).
    const sharedReads = yield* makeSharedReads(HOLDINGS_TTL_MS)

    /**
     * Whether the buyer holds enough for the option, if this request may still read a
     * balance: a read the network does not answer leaves it unknown, not the option out.
     */
    const affordable = (option: PaymentOption, budget: ReturnType<typeof balanceBudget>) =>
      budget.take()
        ? sharedReads(
            balanceKey(option.asset, option.authorization.from),
            chain.balanceOf(option.asset, option.authorization.from)
          ).pipe(
            Effect.map((balance): boolean | undefined => balance >= option.authorization.value),
            Effect.orElseSucceed(() => undefined)
          )
        : Effect.succeed(undefined)

    const payableNow = (payment: Payment): Effect.Effect<void, PaymentExpired | InvalidState> => {
      const status = effectiveStatus(payment, now())
      if (status === "requires_action") return Effect.void
      return status === "expired"
        ? Effect.fail(new PaymentExpired({ paymentId: payment.id }))
        : Effect.fail(
            new InvalidState({
              status,
              kind: "other",
              message: `The payment is ${status}; it cannot be paid now`
            })
          )
    }

    /**
     * A payment is paid only to a merchant that is still active: options,
     * fetch and confirm refuse once it is inactive, suspended or deleted
     * (409 merchant_inactive, as a new payment is refused). Read from the
     * store each time, so a change made on another instance counts at once.
     * A confirm racing a suspension may still win: its settlement is then held
     * (chainwork/SettleStep.ts).
     */
    const merchantActive = (payment: Payment): Effect.Effect<void, MerchantInactive> =>
      Effect.flatMap(merchants.find(payment.merchantId), (found) => {
        const merchant = Option.getOrUndefined(found)
        return merchantPayable(merchant)
          ? Effect.void
          : Effect.fail(
              new MerchantInactive({
                merchantId: payment.merchantId,
                status: merchantStatusOf(merchant)
              })
            )
      })

    /** The payment and its merchant, for `info`. */
    const info = (id: PaymentId) =>
      Effect.gen(function* () {
        const payment = yield* payments.find(id)
        const merchant = yield* merchants.find(payment.merchantId)
        return { payment, merchant: Option.getOrUndefined(merchant), at: now() }
      })

    /** The option's network, which must still be one of the engine's. */
    const networkFor = (option: PaymentOption) => {
      const chainId = chainOfCaip10(option.account)
      const network = networkOf(chain.networks, chainId)
      return network === undefined
        ? Effect.fail(new ChainUnavailable({ chainId, message: "not a configured network" }))
        : Effect.succeed(network)
    }

    /** What the option's buyer signs, and the typed data it signs it as. */
    const signingFor = (option: PaymentOption) =>
      Effect.gen(function* () {
        const network = yield* networkFor(option)
        const permission = permissionOf(option, network)
        const domain =
          permission.kind === "eip3009" ? yield* chain.tokenDomain(option.asset) : undefined
        return {
          network,
          permission,
          request: signingRequest(permission, BigInt(network.reference), domain)
        }
      })

    /**
     * The Permit2 approvals the buyer must send before it signs, from its
     * allowance (PaymentOption.approvals says why a short one is reset): as
     * read in the last few seconds for options, read afresh when `fresh` (the
     * actions fetched just before the wallet acts, maybe just after it approved).
     */
    const approvalsFor = (option: PaymentOption, fresh = false) =>
      option.method !== "permit2"
        ? Effect.succeed<ReadonlyArray<bigint>>([])
        : Effect.flatMap(networkFor(option), (network) => {
            const read = chain.allowance(option.asset, option.authorization.from, network.permit2)
            return Effect.map(
              fresh
                ? read
                : sharedReads(
                    allowanceKey(option.asset, option.authorization.from, network.permit2),
                    read
                  ),
              (allowed): ReadonlyArray<bigint> =>
                allowed >= option.authorization.value
                  ? []
                  : allowed === 0n
                    ? [maxUint256]
                    : [0n, maxUint256]
            )
          })

    /**
     * A native option's one action: the transfer of the exact value to the collector, sent
     * by the buyer's wallet (which pays its gas), its `data` the option's reference (its
     * random 32-byte nonce) that binds the transfer to the option.
     */
    const transferAction = (option: PaymentOption) =>
      Effect.map(
        networkFor(option),
        (network): ReadonlyArray<WalletAction> => [
          {
            type: "walletRpc",
            data: {
              chain_id: chainOfCaip10(option.account),
              method: "eth_sendTransaction",
              params: [
                JSON.stringify({
                  from: option.authorization.from,
                  to: option.authorization.to,
                  value: toHex(option.authorization.value),
                  data: option.authorization.nonce,
                  chainId: toHex(BigInt(network.reference))
                })
              ]
            }
          }
        ]
      )

    /** The option's actions: its approvals (sent in order, gas paid by the buyer), then the signature. */
    const actionsOf = (option: PaymentOption, approvals: ReadonlyArray<bigint>) =>
      option.method === "native"
        ? transferAction(option)
        : Effect.map(
            signingFor(option),
            ({ network, permission, request }): ReadonlyArray<WalletAction> => {
              const chainId = chainOfCaip10(option.account)
              const approve = (amount: bigint): WalletAction => ({
                type: "walletRpc",
                data: {
                  chain_id: chainId,
                  method: "eth_sendTransaction",
                  params: [
                    JSON.stringify({
                      from: option.authorization.from,
                      to: permission.kind === "permit2" ? permission.token : undefined,
                      data: encodeFunctionData({
                        abi: erc20Approve,
                        functionName: "approve",
                        args: [network.permit2, amount]
                      }),
                      value: "0x0",
                      chainId: toHex(BigInt(network.reference))
                    })
                  ]
                }
              })
              return [
                ...approvals.map(approve),
                {
                  type: "walletRpc",
                  data: {
                    chain_id: chainId,
                    method: "eth_signTypedData_v4",
                    params: [option.authorization.from, typedDataJson(request)]
                  }
                }
              ]
            }
          )

    /**
     * What offers are made from: the payment, the networks, the assets its merchant settles in
     * and the rates from its currency to each token's (read once each).
     */
    const pricedFor = (payment: Payment) =>
      Effect.gen(function* () {
        const settled = yield* settlements.listByMerchant(payment.merchantId)
        const rates = new Map<string, PriceQuote | undefined>()
        const unit = payment.amount.unit
        if (unit.kind === "fiat") {
          for (const network of chain.networks) {
            for (const token of network.tokens) {
              const pair = `${unit.currency.code}/${token.priceCurrency}`
              if (!rates.has(pair)) {
                rates.set(pair, yield* prices.rate(unit.currency.code, token.priceCurrency))
              }
            }
          }
        }
        return {
          payment,
          networks: chain.networks,
          settledAssets: new Set<string>(settled.map((s) => s.asset)),
          rate: (from: string, to: string) => rates.get(`${from}/${to}`)
        }
      })

    /**
     * The tokens the payment can be paid in on the engine's networks, whatever the account, with
     * their amounts at the current price; or, when there is none, why (NoOptions.ts). What the
     * checkout page shows before a wallet is opened.
     */
    const payableIn = (payment: Payment) =>
      Effect.map(pricedFor(payment), (priced) => {
        const tokens = payableTokens(priced)
        return {
          tokens,
          noOptions: tokens.length > 0 ? undefined : noOptionsReason({ ...priced, registry })
        }
      })

    /** Options for the accounts; a token whose network does not answer is left out, and logged. */
    const optionsFor = (
      id: PaymentId,
      accounts: ReadonlyArray<Caip10>,
      clientId: string | null = null
    ) =>
      Effect.gen(function* () {
        const payment = yield* payments.find(id)
        yield* payableNow(payment)
        yield* merchantActive(payment)
        const priced = yield* pricedFor(payment)
        const at = now()
        const offered = offers({
          ...priced,
          accounts,
          now: at,
          quoteLockMs: config.quoteLockMs,
          collectData: mustCollectData(config.collectData, payment.amount),
          clientId,
          newOptionId: () => `opt_${makeIdBody(at.getTime())}` as OptionId,
          newNonce: randomNonce
        })
        const budget = balanceBudget()
        const withActions = yield* Effect.forEach(offered, (offer) =>
          Effect.gen(function* () {
            const option = { ...offer, approvals: yield* approvalsFor(offer) }
            return {
              option,
              actions: yield* actionsOf(option, option.approvals),
              affordable: yield* affordable(option, budget)
            }
          }).pipe(
            // The wallet gets the options that could be made (WIRE.md has no place for why one
            // is missing); the operator gets the network, the RPC host and the cause.
            Effect.catchTag("ChainUnavailable", (e) =>
              Effect.as(
                Effect.logWarning("payment option left out: the network did not answer", {
                  paymentId: payment.id,
                  asset: offer.asset,
                  chainId: e.chainId,
                  rpcHost: e.rpcHost ?? null,
                  errorCode: e.errorCode ?? null,
                  reason: e.message
                }),
                undefined
              )
            )
          )
        )
        const available = rankOptions(
          withActions.filter((o) => o !== undefined),
          (o) => ({
            affordable: o.affordable,
            approvals: o.option.approvals.length,
            stable:
              findCurrency(tokenOf(chain.networks, o.option.asset)?.token.priceCurrency ?? "") !==
              undefined
          })
        )
        // Why there is none, in words, for the wallet (NoOptions.ts).
        const noOptions =
          available.length > 0
            ? undefined
            : noOptionsReason({
                ...priced,
                registry,
                accounts,
                unanswered: offered.map((o) => chainOfCaip10(o.account))
              })
        const stored = yield* store.insertOptions(
          available.map((o) => o.option),
          { max: MAX_OPTIONS_PER_PAYMENT, now: at }
        )
        if (stored === "full") {
          return yield* new InvalidState({
            status: "requires_action",
            kind: "other",
            message:
              `The payment already holds ${MAX_OPTIONS_PER_PAYMENT} options whose price is still ` +
              "locked: confirm one of them, or ask again once some have expired"
          })
        }
        const collecting = available
          .filter((o) => o.option.collectData)
          .map((o) => o.option.account)
        const withCollect = yield* Effect.forEach(available, (o) =>
          Effect.map(
            o.option.collectData
              ? Effect.map(collectUrl(payment.id, [o.option.account]), collectDataObject)
              : Effect.succeed(null),
            (collectData: CollectData | null) => ({ ...o, collectData })
          )
        )
        return {
          payment,
          options: withCollect,
          noOptions,
          collectData:
            collecting.length === 0
              ? null
              : collectDataObject(yield* collectUrl(payment.id, [...new Set(collecting)]))
        }
      })

    /**
     * The engine's data-collection page for the payment and accounts, with the token that lets
     * it be opened and posted (CollectDataToken.ts).
     */
    const collectUrl = (id: PaymentId, accounts: ReadonlyArray<string>) =>
      Effect.map(
        collectDataToken(secret, id, accounts),
        (token) =>
          `${publicUrl}/collect/${id}?accounts=${encodeURIComponent(accounts.join(","))}&${COLLECT_TOKEN_PARAM}=${token}`
      )

    /** Passes when `token` is the one the engine made for the payment and exactly these accounts. */
    const authorizeCollect = (
      id: PaymentId,
      accounts: ReadonlyArray<Caip10>,
      token: string | null | undefined
    ) =>
      Effect.flatMap(isCollectDataToken(secret, id, accounts, token), (valid) =>
        valid ? Effect.void : Effect.fail(new CollectDataForbidden({ paymentId: id }))
      )

    /** The buyer's data for an option that needs it: sent with the confirm, or stored by the page. */
    const collectedFor = (option: PaymentOption, sent: ConfirmRequest["collectedData"]) =>
      Effect.gen(function* () {
        if (!option.collectData) return
        if (sent !== undefined && sent !== null) {
          const checked = collectedDataFromFields(sent.fields)
          if (Either.isLeft(checked)) {
            return yield* new InvalidInput({
              message: `${checked.left[0]?.field}: ${checked.left[0]?.message}`,
              issues: checked.left
            })
          }
          yield* store.saveCollectedData({
            paymentId: option.paymentId,
            account: option.account,
            data: checked.right as unknown as Readonly<Record<string, unknown>>,
            collectedAt: now()
          })
          return
        }
        const stored = yield* store.findCollectedData(option.paymentId, option.account)
        if (Option.isNone(stored)) {
          return yield* InvalidInput.of(
            "collectedData",
            `is required for this option: send it, or complete ${yield* collectUrl(option.paymentId, [option.account])}`
          )
        }
      })

    /**
     * The data-collection page's submission: its token checked (only a token covering an
     * account writes, or replaces, that account's data), then the data checked, then kept for
     * each account.
     */
    const collect = (
      id: PaymentId,
      accounts: ReadonlyArray<Caip10>,
      token: string | null | undefined,
      fields: ReadonlyArray<SubmittedField>
    ) =>
      Effect.gen(function* () {
        yield* authorizeCollect(id, accounts, token)
        const payment = yield* payments.find(id)
        yield* payableNow(payment)
        const checked = collectedDataFromFields(fields)
        if (Either.isLeft(checked)) return { issues: checked.left }
        const at = now()
        for (const account of accounts) {
          yield* store.saveCollectedData({
            paymentId: id,
            account,
            data: checked.right as unknown as Readonly<Record<string, unknown>>,
            collectedAt: at
          })
        }
        return { issues: [] }
      })

    /** The stored option, which must be one of this payment's. */
    const optionOf = (payment: Payment, optionId: string) =>
      Effect.flatMap(
        store.findOption(optionId as OptionId),
        (found): Effect.Effect<PaymentOption, InvalidInput> =>
          Option.isSome(found) && found.value.paymentId === payment.id
            ? Effect.succeed(found.value)
            : Effect.fail(InvalidInput.of("optionId", "is not an option of this payment"))
      )

    const fetchActions = (id: PaymentId, optionId: string) =>
      Effect.gen(function* () {
        const payment = yield* payments.find(id)
        const option = yield* optionOf(payment, optionId)
        yield* merchantActive(payment)
        // The allowance now: a buyer who approved since the options is not asked again (USDT
        // would refuse a second approval of a non-zero allowance).
        return yield* Effect.flatMap(approvalsFor(option, true), (approvals) =>
          actionsOf(option, approvals)
        ).pipe(Effect.mapError((e) => new ChainUnreachable({ chainId: e.chainId })))
      })

    const notPayers = (option: PaymentOption, field: string) =>
      InvalidInput.of(
        field,
        `is not ${option.authorization.from}'s signature of the offered authorization`
      )

    /**
     * Whether the signature is the payer's, the cheapest way that is sure
     * (PayerSignature.ts): a key pair's 65 bytes recovered here, tried on the
     * token only if the address turns out to hold code (an EIP-7702
     * delegation, which the token checks through the account); anything else
     * asked of the chain (ERC-1271, ERC-6492), then tried on the token. What
     * the collect job is to send is the signature as stored (`stored`), and
     * whether the account must be deployed first (`deploy`).
     */
    const checkSignature = (option: PaymentOption, sent: Hex, field: string) =>
      Effect.gen(function* () {
        const parsed = parsePayerSignature(sent)
        if (typeof parsed === "string") {
          return yield* InvalidInput.of(field, parsed)
        }
        const auth = option.authorization
        const chainId = chainOfCaip10(option.account)
        const { permission, request } = yield* signingFor(option)
        if (parsed.kind === "ecdsa" && (yield* isSignedBy(request, auth.from, parsed.signature))) {
          return {
            payer: parsed,
            permission,
            stored: parsed.signature,
            simulate: "if the account has code",
            deploy: false,
            deployment: undefined
          } as const
        }
        const valid = yield* chain.verifyAuthorization(
          option.asset,
          permission,
          parsed.kind === "counterfactual" ? parsed.wrapped : parsed.signature
        )
        if (!valid) return yield* notPayers(option, field)
        if (parsed.kind !== "counterfactual") {
          return {
            payer: parsed,
            permission,
            stored: parsed.signature,
            simulate: true,
            deploy: false,
            deployment: undefined
          } as const
        }
        // Deployed meanwhile (by the buyer's wallet, or another payment's job): paid as it is.
        const deployed = (yield* chain.codeAt(chainId, auth.from)) !== "0x"
        if (!deployed && networkOf(chain.networks, chainId)?.deployer === undefined) {
          return yield* InvalidInput.of(
            field,
            `is an undeployed account's (ERC-6492), which this engine does not deploy on ${chainId}: deploy ${auth.from} first`
          )
        }
        return {
          payer: parsed,
          permission,
          stored: parsed.wrapped,
          simulate: true,
          deploy: !deployed,
          deployment: parsed.deployment
        } as const
      })

    /**
     * Where the buyer's approvals of Permit2 are: each must be a transaction
     * the network has, not reverted. Whether it approves enough is read once
     * it is mined (its sender may be a bundler, for a smart account): by the
     * simulation here, or by the collect job, which waits for it.
     */
    const approvalsSent = (option: PaymentOption, hashes: ReadonlyArray<Hex>) =>
      Effect.gen(function* () {
        const chainId = chainOfCaip10(option.account)
        let pending = false
        for (const [i, hash] of hashes.entries()) {
          const state = yield* chain.transactionState(chainId, hash)
          if (state._tag === "Unknown") {
            return yield* InvalidInput.of(
              `results.${i}.data.0`,
              `is no transaction ${chainId} has: send the approval, then confirm with its hash`
            )
          }
          if (state._tag === "Mined" && !state.success) {
            return yield* InvalidInput.of(
              `results.${i}.data.0`,
              "reverted: the approval did not go through (fetch the option's actions again)"
            )
          }
          if (state._tag === "Pending") pending = true
        }
        return pending ? ("pending" as const) : ("mined" as const)
      })

    /** A simulated transfer's refusal, said for what the buyer can do about it. */
    const refusalOf = (option: PaymentOption, reason: string, field: string) =>
      Effect.gen(function* () {
        if (option.method === "permit2") {
          const network = yield* networkFor(option)
          const allowed = yield* chain.allowance(
            option.asset,
            option.authorization.from,
            network.permit2
          )
          if (allowed < option.authorization.value) {
            return InvalidInput.of(
              "results",
              `${option.authorization.from} has not approved Permit2 (${network.permit2}) for this amount of the token: send the approval first (fetch the option's actions again)`
            )
          }
        }
        return InvalidInput.of(
          field,
          `is refused by the token when it is tried on the chain: ${reason}`
        )
      }).pipe(
        Effect.catchTag("ChainUnavailable", () =>
          Effect.succeed(
            InvalidInput.of(
              field,
              `is refused by the token when it is tried on the chain: ${reason}`
            )
          )
        )
      )

    /** Whether the transfer is in a block made before the option's price lock ended. */
    const minedInTime = (option: PaymentOption, hash: Hex) =>
      Effect.gen(function* () {
        const chainId = chainOfCaip10(option.account)
        const state = yield* chain.transactionState(chainId, hash)
        if (state._tag !== "Mined") return false
        const block = yield* chain.head(chainId, state.blockNumber)
        return block.timestamp < option.authorization.validBefore
      })

    /**
     * A native option's confirm: the transfer the buyer's wallet sent, which
     * the network must have (pending or mined) and whose `data` must be the
     * option's reference. Anything else about it (sender, recipient, value)
     * is the collect job's to judge once it is mined: a mismatch then fails
     * the payment and keeps what arrived as returnable funds, which a refusal
     * here could not. The hash is claimed in the write that starts the
     * payment: a transfer confirmed on one payment cannot pay another.
     */
    const confirmNative = (
      payment: Payment,
      option: PaymentOption,
      request: ConfirmRequest,
      wallet: WalletIdentity | undefined,
      unreachable: (e: ChainUnavailable) => Effect.Effect<never, ChainUnreachable>,
      lockExpired: boolean
    ) =>
      Effect.gen(function* () {
        const result = nativeResultOf(request.results)
        if (Either.isLeft(result)) {
          return yield* new InvalidInput({
            message: `${result.left[0]?.field}: ${result.left[0]?.message}`,
            issues: result.left
          })
        }
        const hash = result.right
        const field = "results.0.data.0"
        const chainId = chainOfCaip10(option.account)
        const sent = yield* chain
          .transaction(chainId, hash)
          .pipe(Effect.catchTag("ChainUnavailable", unreachable))
        if (sent === undefined) {
          return yield* InvalidInput.of(
            field,
            `is no transaction ${chainId} has: send the transfer, then confirm with its hash`
          )
        }
        if (sent.input.toLowerCase() !== option.authorization.nonce.toLowerCase()) {
          return yield* InvalidInput.of(
            field,
            `is not this option's transfer: its data must be the option's reference, ${option.authorization.nonce}`
          )
        }
        // The coin is sent before the confirm: a confirm that arrives after the price lock
        // still pays when the transfer was mined within it (the wallet cannot take it back).
        if (
          lockExpired &&
          !(yield* minedInTime(option, hash).pipe(Effect.catchTag("ChainUnavailable", unreachable)))
        ) {
          return yield* new QuoteExpired({ optionId: option.id })
        }
        yield* collectedFor(option, request.collectedData)
        const collect = newChainJob(
          payment.id,
          chainId,
          {
            kind: "collect",
            optionId: option.id,
            signature: "0x",
            paid: { hash, from: sent.from, nonce: sent.nonce }
          },
          now()
        )
        yield* chainWork
          .queueHeld(collect, (job) =>
            payments.transitionFenced(payment.id, startProcessing(option, wallet, job))
          )
          .pipe(
            Effect.catchTags({
              ChainJobLeaseLost: Effect.die,
              NonceTaken: Effect.die,
              TransactionClaimed: () =>
                InvalidInput.of(field, "is the transfer of another payment already")
            })
          )
      })

    /**
     * Checks a confirm against the option offered, then moves the payment to
     * `processing` with its `collect` job in one write, and wakes the chain work.
     */
    const confirm = (id: PaymentId, request: ConfirmRequest, wallet: WalletIdentity | undefined) =>
      Effect.gen(function* () {
        const payment = yield* payments.find(id)
        const option = yield* optionOf(payment, request.optionId)
        yield* payableNow(payment)
        yield* merchantActive(payment)
        const unreachable = (e: ChainUnavailable) =>
          Effect.zipRight(
            Effect.logWarning("confirm: the network did not answer", {
              paymentId: id,
              chainId: e.chainId,
              rpcHost: e.rpcHost ?? null,
              errorCode: e.errorCode ?? null,
              reason: e.message
            }),
            Effect.fail(new ChainUnreachable({ chainId: e.chainId }))
          )
        const lockExpired = now().getTime() >= option.expiresAt.getTime()
        if (option.method === "native") {
          return yield* confirmNative(payment, option, request, wallet, unreachable, lockExpired)
        }
        if (lockExpired) return yield* new QuoteExpired({ optionId: option.id })
        const results = confirmResultsOf(request.results, option.approvals.length)
        if (Either.isLeft(results)) {
          return yield* new InvalidInput({
            message: `${results.left[0]?.field}: ${results.left[0]?.message}`,
            issues: results.left
          })
        }
        const { approvals, signature } = results.right
        const signatureField = `results.${approvals.length}.data.0`
        const checked = yield* checkSignature(option, signature, signatureField).pipe(
          Effect.catchTag("ChainUnavailable", unreachable)
        )
        const approving = yield* approvalsSent(option, approvals).pipe(
          Effect.catchTag("ChainUnavailable", unreachable)
        )
        // A key pair's signature costs no call of its own: the code is read beside the balance.
        const [balance, code] = yield* Effect.all(
          [
            chain.balanceOf(option.asset, option.authorization.from),
            checked.simulate === "if the account has code"
              ? chain.codeAt(chainOfCaip10(option.account), option.authorization.from)
              : Effect.succeed<Hex>("0x")
          ],
          { concurrency: "unbounded" }
        ).pipe(Effect.catchAll(unreachable))
        yield* collectedFor(option, request.collectedData)
        if (balance < option.authorization.value) {
          return yield* new InsufficientBalance({
            account: option.account,
            asset: option.asset,
            required: option.authorization.value.toString(),
            balance: balance.toString()
          })
        }
        // A Permit2 transfer is always tried (the allowance decides too), unless an approval is
        // still pending: it cannot pass before, and the collect job waits for it.
        const simulate =
          option.method === "permit2"
            ? approving === "mined"
            : checked.simulate === true || code !== "0x"
        if (simulate) {
          // A signature the account accepts may still be one the token refuses (an EIP-7702
          // delegate without ERC-1271, an account that checks another hash): the token decides.
          yield* chain
            .simulateReceive(
              option.asset,
              checked.permission,
              checked.payer.signature,
              checked.deploy ? checked.deployment : undefined
            )
            .pipe(
              Effect.catchTag("ChainUnavailable", unreachable),
              Effect.catchTag("TransferRefused", (e) =>
                Effect.flatMap(refusalOf(option, e.reason, signatureField), Effect.fail)
              )
            )
        }
        // Queued in the same write: from here the transfer survives a crash (chainwork/). Held
        // by this process, which sends it at once.
        // An account not deployed yet is deployed first, by its own job (chainwork/DeployStep.ts).
        const collect = newChainJob(
          id,
          chainOfCaip10(option.account),
          {
            kind: checked.deploy ? "deploy" : "collect",
            optionId: option.id,
            signature: checked.stored,
            approvals
          },
          now()
        )
        yield* chainWork.queueHeld(collect, (job) =>
          payments.transition(id, startProcessing(option, wallet, job))
        )
      })

    const cancel = (id: PaymentId) =>
      payments.transition(id, { _tag: "Cancel", reason: "cancelled_by_user" })

    return {
      info,
      payableNow,
      authorizeCollect,
      collect: spanned("Gateway.collect", collect),
      optionsFor: spanned("Gateway.optionsFor", optionsFor),
      payableIn: spanned("Gateway.payableIn", payableIn),
      fetchActions: spanned("Gateway.fetchActions", fetchActions),
      confirm: spanned("Gateway.confirm", confirm),
      cancel: spanned("Gateway.cancel", cancel),
      status: payments.walletStatus,
      /** The estimate a wallet shows for an option: its network's. */
      etaSeconds: (option: PaymentOption) =>
        networkOf(chain.networks, chainOfCaip10(option.account))?.etaSeconds ?? 0
    } as const
  }),
  dependencies: [ChainWork.Default, Payments.Default]
}) {}
