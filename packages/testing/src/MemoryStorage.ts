/**
 * In-memory implementations of every storage port, for unit tests of the
 * core. They keep the same rules as the real stores (uniqueness, soft
 * deletion, idempotency records written with the work, chain jobs queued with
 * the payment change and fenced by their lease) and pass the same storage
 * contract suites; they keep nothing across restarts.
 */
import {
  ApiKeyLookupTaken,
  AuditEntry,
  type AuditLog,
  AuditStore,
  applyChange,
  auditValueFromJson,
  auditValueToJson,
  type BucketLevel,
  type ChainJob,
  type ChainJobKind,
  type ChainJobLease,
  ChainJobLeaseLost,
  ChainJobStore,
  type ChainTransfer,
  type ClaimedDelivery,
  type CollectedDataRecord,
  type CryptoSettlement,
  comparePayments,
  computeStats,
  EngineSecretStore,
  type EventQuery,
  EventStore,
  type FrozenLogo,
  fullBucket,
  GatewayStore,
  IdempotencyClaimLost,
  type IdempotencyCompletion,
  type IdempotencyScope,
  IdempotencyStore,
  isAfterCursor,
  isFull,
  type KeyOwner,
  KeyRecord,
  KeyStore,
  LogoStore,
  Merchant,
  type MerchantId,
  MerchantStore,
  MILLITOKENS_PER_TOKEN,
  matchesFilter,
  type NewChainJob,
  NOT_FAILING,
  NonceTaken,
  type OptionsInserted,
  type Outbox,
  type Partner,
  PartnerStore,
  type PayEvent,
  type Payment,
  type PaymentOption,
  PaymentStore,
  type PayStorage,
  queuedJob,
  RateLimitStore,
  RefundExists,
  RetentionStore,
  type ReturnableFunds,
  type RotateOutcome,
  randomBase62,
  refill,
  type SealedField,
  SealedValueStore,
  SettlementAssetConflict,
  SettlementStore,
  StorageProbe,
  type TokenBucketSettings,
  TransactionClaimed,
  WalletApp,
  WalletAppStore,
  type WebhookAttempt,
  WebhookDelivery,
  type WebhookDeliveryLease,
  WebhookDeliveryLeaseLost,
  type WebhookDeliveryRecord,
  WebhookDeliveryStore,
  WebhookEndpoint,
  type WebhookEndpointId,
  WebhookEndpointStore
} from "@pay/core"
import { Effect, Layer, Option } from "effect"

interface DeliveryRow {
  delivery: WebhookDelivery
  /** Its event's place in the outbox. */
  readonly seq: number
  leaseToken: string | null
  leaseUntil: number | null
  /** Oldest first. */
  readonly attempts: Array<WebhookAttempt>
}

interface IdempotencyRow {
  readonly fingerprint: string
  token: string
  lockedAt: number
  readonly createdAt: number
  response: { readonly status: number; readonly body: string } | undefined
}

interface LiveSettlement extends CryptoSettlement {
  readonly deletedAt: Date | null
}

/** A job as stored: the job and the lease it is under, if any. */
interface JobRow {
  job: ChainJob
  leaseToken: string | null
  leaseUntil: number | null
}

const scopeKey = (s: IdempotencyScope) => JSON.stringify([s.partnerId, s.route, s.key])

/** Oldest first; a tie (one millisecond) broken by hash, as the databases order them. */
const byCreation = (a: ChainTransfer, b: ChainTransfer) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0)

/** In-memory storage, with a look at its durable work (what the test engine's clock watches). */
export interface OpenMemoryStorage {
  readonly layer: Layer.Layer<PayStorage>
  /** Webhook deliveries claimed and not yet recorded: an attempt under way. */
  readonly deliveriesClaimed: () => number
  /** When the next chain job, delivery or payment expiry falls due after `at`, if one will. */
  readonly nextDueAt: (at: number) => number | undefined
}

/** A fresh, empty in-memory storage. */
export const makeMemoryStorage = (): Layer.Layer<PayStorage> => openMemoryStorage().layer

export const openMemoryStorage = (): OpenMemoryStorage => {
  const partners = new Map<string, Partner>()
  /** Every key of every owner, by id. */
  const keys = new Map<string, KeyRecord>()
  const merchants = new Map<string, Merchant>()
  const settlements = new Map<string, LiveSettlement>()
  const idempotency = new Map<string, IdempotencyRow>()
  const payments = new Map<string, Payment>()
  const options = new Map<string, PaymentOption>()
  /** Options the purge found their payment was paid with: kept as long as the payment. */
  const keptOptions = new Set<string>()
  /** Whether `o` is the option its payment's collect (or deploy) job names. */
  const paidWith = (o: PaymentOption) =>
    (["collect", "deploy"] as const).some((kind) => {
      const payload = jobOf(o.paymentId, kind)?.job.payload
      return payload !== undefined && "optionId" in payload && payload.optionId === o.id
    })
  const collected = new Map<string, CollectedDataRecord>()
  const apps = new Map<string, WalletApp>()
  const jobs = new Map<string, JobRow>()
  const transfers = new Map<string, ChainTransfer>()
  /** Returnable funds, by chain and transaction (one record each). */
  const returnables = new Map<string, ReturnableFunds>()
  const logos = new Map<string, FrozenLogo>()
  /** The next nonce to hand out, per chain and sender. */
  const nonces = new Map<string, number>()
  /** The run of each chain the engine last worked on (ChainJobStore.swapChainInstance). */
  const chainInstances = new Map<string, { readonly instance: string; readonly since: Date }>()

  /** Called before the write it goes with, so a lost claim throws with nothing changed. */
  const complete = (completion: IdempotencyCompletion | undefined) => {
    if (completion === undefined) return
    const row = idempotency.get(scopeKey(completion.scope))
    if (row === undefined || row.token !== completion.token || row.response !== undefined) {
      throw new IdempotencyClaimLost({ scope: completion.scope })
    }
    row.response = completion.response
  }

  const keyTaken = (key: KeyRecord) =>
    [...keys.values()].some(
      (k) => k.hash === key.hash || (key.lookupId !== null && k.lookupId === key.lookupId)
    )
  const ownedKey = (owner: KeyOwner, id: string) => {
    const key = keys.get(id)
    return key !== undefined && key.ownerKind === owner.kind && key.ownerId === owner.id
      ? key
      : undefined
  }
  const endedBy = (key: KeyRecord, at: Date) => key.revokedAt !== null && key.revokedAt <= at
  const activeAt = (key: KeyRecord, at: Date) =>
    !endedBy(key, at) && (key.expiresAt === null || key.expiresAt > at)

  const keyStore = KeyStore.of({
    insert: (key, extras) =>
      Effect.suspend(() => {
        if (keyTaken(key)) return Effect.fail(new ApiKeyLookupTaken())
        complete(extras?.completion)
        audit(auditOf(extras?.audit, key))
        keys.set(key.id, key)
        return Effect.void
      }),
    findByLookupId: (lookupId) =>
      Effect.sync(() =>
        Option.fromNullable([...keys.values()].find((k) => k.lookupId === lookupId))
      ),
    findByHash: (hash) =>
      Effect.sync(() => Option.fromNullable([...keys.values()].find((k) => k.hash === hash))),
    find: (owner, id) => Effect.sync(() => Option.fromNullable(ownedKey(owner, id))),
    list: (owner) =>
      Effect.sync(() =>
        [...keys.values()]
          .filter((k) => k.ownerKind === owner.kind && k.ownerId === owner.id)
          .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
      ),
    revoke: (owner, id, at, options) =>
      Effect.sync(() => {
        const key = ownedKey(owner, id)
        if (key === undefined) return { _tag: "NotFound" as const }
        if (endedBy(key, at)) return { _tag: "AlreadyRevoked" as const, key }
        const othersLeft = [...keys.values()].some(
          (k) =>
            k.ownerKind === owner.kind &&
            k.ownerId === owner.id &&
            k.id !== id &&
            k.revokedAt === null &&
            (k.expiresAt === null || k.expiresAt > at)
        )
        if (options.keepOneActive && !othersLeft) return { _tag: "LastActiveKey" as const }
        complete(options.completion)
        const revoked = new KeyRecord({ ...key, revokedAt: at })
        audit(auditOf(options.audit, revoked))
        keys.set(id, revoked)
        return { _tag: "Revoked" as const, key: revoked }
      }),
    rotate: (owner, id, replacement, oldEndsAt, at, extras) =>
      Effect.suspend((): Effect.Effect<RotateOutcome, ApiKeyLookupTaken> => {
        const key = ownedKey(owner, id)
        if (key === undefined) return Effect.succeed({ _tag: "NotFound" as const })
        if (!activeAt(key, at)) return Effect.succeed({ _tag: "Inactive" as const })
        if (keyTaken(replacement)) return Effect.fail(new ApiKeyLookupTaken())
        complete(extras?.completion)
        const ends = key.revokedAt !== null && key.revokedAt < oldEndsAt ? key.revokedAt : oldEndsAt
        const old = new KeyRecord({ ...key, revokedAt: ends, rotatedTo: replacement.id })
        audit(auditOf(extras?.audit, { old, replacement }))
        keys.set(id, old)
        keys.set(replacement.id, replacement)
        return Effect.succeed({ _tag: "Rotated" as const, old, replacement })
      }),
    touch: (id, at, staleBefore) =>
      Effect.sync(() => {
        const key = keys.get(id)
        if (key === undefined || (key.lastUsedAt !== null && key.lastUsedAt >= staleBefore)) return
        keys.set(id, new KeyRecord({ ...key, lastUsedAt: at }))
      })
  })

  const partnerStore = PartnerStore.of({
    insert: (partner, key, log) =>
      Effect.suspend(() => {
        if (keyTaken(key)) return Effect.fail(new ApiKeyLookupTaken())
        audit(auditOf(log, key))
        partners.set(partner.id, partner)
        keys.set(key.id, key)
        return Effect.void
      }),
    find: (id) => Effect.sync(() => Option.fromNullable(partners.get(id))),
    list: Effect.sync(() => [...partners.values()].sort((a, b) => (a.id < b.id ? -1 : 1)))
  })

  const walletAppStore = WalletAppStore.of({
    insert: (app, key) =>
      Effect.suspend(() => {
        if (keyTaken(key)) return Effect.fail(new ApiKeyLookupTaken())
        apps.set(app.id, app)
        keys.set(key.id, key)
        return Effect.void
      }),
    find: (id) => Effect.sync(() => Option.fromNullable(apps.get(id))),
    list: Effect.sync(() =>
      [...apps.values()].sort(
        (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1)
      )
    ),
    setStatus: (id, status) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(apps.get(id)), (app) => {
          const updated = new WalletApp({ ...app, status })
          apps.set(id, updated)
          return updated
        })
      ),
    touch: (id, at, ifBefore) =>
      Effect.sync(() => {
        const app = apps.get(id)
        if (app === undefined) return
        if (app.lastUsedAt !== null && app.lastUsedAt.getTime() > ifBefore.getTime()) return
        apps.set(id, new WalletApp({ ...app, lastUsedAt: at }))
      })
  })

  /** The outbox, in the order events were written (their `seq`). */
  const events: Array<PayEvent> = []
  /** Each event's `seq`, given as it is written: the purge removes events, never renumbers. */
  const eventSeq = new Map<string, number>()
  let nextSeq = 0
  const writeEvent = (event: PayEvent) => {
    events.push(event)
    eventSeq.set(event.id, nextSeq++)
  }
  /** Deliveries in the order they were queued, with their lease and attempts. */
  const deliveries: Array<DeliveryRow> = []
  const endpoints = new Map<WebhookEndpointId, WebhookEndpoint>()
  /** When each failing endpoint's run of failures began. */
  const failingSince = new Map<WebhookEndpointId, Date>()
  const queue = (endpointId: WebhookEndpointId, event: PayEvent) =>
    deliveries.push({
      delivery: new WebhookDelivery({
        endpointId,
        eventId: event.id,
        paymentId: event.paymentId,
        state: "pending",
        attempts: 0,
        nextAttemptAt: event.createdAt,
        createdAt: event.createdAt
      }),
      seq: eventSeq.get(event.id) ?? -1,
      leaseToken: null,
      leaseUntil: null,
      attempts: []
    })
  /** The event, and a delivery for each endpoint that wants it now. */
  const record = (event: PayEvent) => {
    writeEvent(event)
    for (const w of endpoints.values()) {
      if (
        w.partnerId === event.partnerId &&
        w.deletedAt === null &&
        w.status === "enabled" &&
        (w.merchantId === null || w.merchantId === event.merchantId) &&
        (w.events === null || (w.events as ReadonlyArray<string>).includes(event.type))
      ) {
        queue(w.id, event)
      }
    }
  }
  const publish = <A>(outbox: Outbox<A> | undefined, written: A) => {
    if (outbox) for (const event of outbox(written)) record(event)
  }

  /** The audit trail, in the order entries were written. */
  const auditEntries: Array<AuditEntry> = []
  /**
   * The entries `log` makes of a change, as the databases keep them (`before` and `after`
   * through JSON text), checked before the change is applied: an entry that cannot be
   * written (a taken id) throws with nothing changed, as a rolled-back transaction.
   */
  const auditOf = <A>(log: AuditLog<A> | undefined, changed: A) => {
    const entries = (log?.(changed) ?? []).map(
      (e) =>
        new AuditEntry({
          ...e,
          before: auditValueFromJson(auditValueToJson(e.before)),
          after: auditValueFromJson(auditValueToJson(e.after))
        })
    )
    for (const e of entries) {
      if (auditEntries.some((kept) => kept.id === e.id)) {
        throw new Error(`UNIQUE constraint failed: audit_log.id (${e.id})`)
      }
    }
    return entries
  }
  /** After the change: its entries. */
  const audit = (entries: ReadonlyArray<AuditEntry>) => {
    auditEntries.push(...entries)
  }
  const auditStore = AuditStore.of({
    list: (q) =>
      Effect.sync(() => {
        const end =
          q.before === undefined
            ? auditEntries.length
            : auditEntries.findIndex((e) => e.id === q.before)
        return auditEntries
          .slice(0, Math.max(0, end))
          .filter((e) => q.partnerId === undefined || e.partnerId === q.partnerId)
          .reverse()
          .slice(0, q.limit)
      })
  })

  /** Applies `f` to a live merchant; a deleted one (or none) is not changed. */
  const change = (
    id: MerchantId,
    f: (m: Merchant) => Merchant,
    outbox: Outbox<Merchant> | undefined
  ) =>
    Effect.sync(() => {
      const current = merchants.get(id)
      if (current === undefined || current.deletedAt !== null) return Option.none<Merchant>()
      const next = f(current)
      merchants.set(id, next)
      publish(outbox, next)
      return Option.some(next)
    })

  const merchantStore = MerchantStore.of({
    insert: (merchant, completion, outbox) =>
      Effect.sync(() => {
        complete(completion)
        merchants.set(merchant.id, merchant)
        publish(outbox, merchant)
      }),
    find: (id) => Effect.sync(() => Option.fromNullable(merchants.get(id))),
    list: (q) =>
      Effect.sync(() => {
        const needle = q.search?.toLowerCase()
        const matches = [...merchants.values()]
          .filter(
            (m) =>
              m.partnerId === q.partnerId &&
              m.deletedAt === null &&
              (q.status === undefined || m.status === q.status) &&
              (needle === undefined ||
                m.name.toLowerCase().includes(needle) ||
                m.id.toLowerCase().includes(needle))
          )
          .sort((a, b) => (a.id < b.id ? 1 : -1))
        const page = matches.filter((m) => q.before === undefined || m.id < q.before)
        return { merchants: page.slice(0, q.limit), totalCount: matches.length }
      }),
    update: (id, changes, at, outbox) =>
      change(
        id,
        (m) =>
          new Merchant({
            ...m,
            name: changes.name ?? m.name,
            email: changes.email ?? m.email,
            iconUrl: changes.logo === undefined ? m.iconUrl : (changes.logo?.iconUrl ?? null),
            logoName: changes.logo === undefined ? m.logoName : (changes.logo?.logoName ?? null),
            updatedAt: at
          }),
        outbox
      ),
    setStatus: (id, status, at, outbox) =>
      change(id, (m) => new Merchant({ ...m, status, updatedAt: at }), outbox),
    markDeleted: (id, at, outbox) =>
      Effect.flatMap(
        change(id, (m) => new Merchant({ ...m, deletedAt: at }), outbox),
        // Deleted before: the first time stands, and nothing is written.
        (deleted) =>
          Option.isSome(deleted)
            ? Effect.succeed(deleted)
            : Effect.sync(() => Option.fromNullable(merchants.get(id)))
      )
  })

  const live = (merchantId: MerchantId) =>
    [...settlements.values()].filter((s) => s.merchantId === merchantId && s.deletedAt === null)

  const strip = ({ deletedAt: _, ...s }: LiveSettlement): CryptoSettlement => s

  const settlementStore = SettlementStore.of({
    insertAll: (rows, completion, outbox, log) =>
      Effect.suspend(() => {
        const taken = new Set<string>()
        for (const row of rows) {
          const clash =
            taken.has(row.asset) || live(row.merchantId).some((s) => s.asset === row.asset)
          if (clash) {
            return Effect.fail(
              new SettlementAssetConflict({ asset: row.asset, merchantId: row.merchantId })
            )
          }
          taken.add(row.asset)
        }
        const entries = auditOf(log, rows)
        complete(completion)
        for (const row of rows) settlements.set(row.id, { ...row, deletedAt: null })
        publish(outbox, rows)
        audit(entries)
        return Effect.void
      }),
    listByMerchant: (merchantId) =>
      Effect.sync(() =>
        live(merchantId)
          .sort((a, b) => (a.id < b.id ? -1 : 1))
          .map(strip)
      ),
    updateDestination: (merchantId, id, destination, at, outbox, log) =>
      Effect.sync(() => {
        const s = settlements.get(id)
        if (!s || s.merchantId !== merchantId || s.deletedAt !== null) return Option.none()
        const next = { ...s, destination, updatedAt: at }
        const entries = auditOf(log, { before: strip(s), after: strip(next) })
        settlements.set(id, next)
        publish(outbox, strip(next))
        audit(entries)
        return Option.some(strip(next))
      }),
    remove: (merchantId, id, at, outbox, log) =>
      Effect.sync(() => {
        const s = settlements.get(id)
        if (!s || s.merchantId !== merchantId) return "not_found" as const
        if (s.deletedAt !== null) return "already_removed" as const
        const entries = auditOf(log, strip(s))
        settlements.set(id, { ...s, deletedAt: at, updatedAt: at })
        publish(outbox, id)
        audit(entries)
        return "removed" as const
      })
  })

  const idempotencyStore = IdempotencyStore.of({
    claim: (scope, fingerprint, token, now, staleBefore, replayableSince) =>
      Effect.sync(() => {
        const key = scopeKey(scope)
        const row = idempotency.get(key)
        // A finished key past its replay window is claimed as a key never used.
        const pastWindow =
          row?.response !== undefined &&
          replayableSince !== undefined &&
          row.createdAt < replayableSince.getTime()
        if (!row || pastWindow) {
          idempotency.set(key, {
            fingerprint,
            token,
            lockedAt: now.getTime(),
            createdAt: now.getTime(),
            response: undefined
          })
          return { _tag: "Claimed" } as const
        }
        if (row.fingerprint !== fingerprint) return { _tag: "Mismatch" } as const
        if (row.response) return { _tag: "Replay", response: row.response } as const
        if (row.lockedAt < staleBefore.getTime()) {
          row.lockedAt = now.getTime()
          row.token = token
          return { _tag: "Claimed" } as const
        }
        return { _tag: "InProgress" } as const
      }),
    renew: (scope, token, now) =>
      Effect.sync(() => {
        const row = idempotency.get(scopeKey(scope))
        if (row === undefined || row.token !== token || row.response !== undefined) return false
        row.lockedAt = now.getTime()
        return true
      }),
    complete: (completion) => Effect.sync(() => complete(completion)),
    release: (scope, token) =>
      Effect.sync(() => {
        const key = scopeKey(scope)
        const row = idempotency.get(key)
        if (row?.token === token && row.response === undefined) idempotency.delete(key)
      }),
    purge: (before, limit) =>
      Effect.sync(() => {
        let purged = 0
        for (const [key, row] of idempotency) {
          if (purged >= limit) break
          if (row.response && row.createdAt < before.getTime()) {
            idempotency.delete(key)
            purged++
          }
        }
        return purged
      })
  })

  const paymentStore = PaymentStore.of({
    insert: (payment, completion) =>
      Effect.sync(() => {
        complete(completion)
        payments.set(payment.id, payment)
      }),
    find: (id) => Effect.sync(() => Option.fromNullable(payments.get(id))),
    findStatus: (id) => Effect.sync(() => Option.fromNullable(payments.get(id))),
    findStatusNow: (id) => Option.fromNullable(payments.get(id)),
    transition: (id, from, change, completion, outbox) =>
      changeWrite(() => {
        const current = payments.get(id)
        if (current === undefined || current.status !== from) return Option.none()
        const next = applyChange(current, change)
        // Every check before the first change: a refusal leaves everything as it was.
        const ends = change.completes === undefined ? undefined : held(change.completes)
        const queue = change.enqueue === undefined ? undefined : enqueuing(change.enqueue)
        complete(completion)
        payments.set(id, next)
        if (ends !== undefined) endJob(ends, change.at)
        queue?.()
        publish(outbox, next)
        return Option.some(next)
      }),
    dueForExpiry: (now, limit) =>
      Effect.sync(() =>
        [...payments.values()]
          .filter((p) => p.status === "requires_action" && p.expiresAt.getTime() <= now.getTime())
          .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
          .slice(0, limit)
          .map((p) => p.id)
      ),
    addRefund: (id, refund, completion, outbox) =>
      Effect.suspend(() => {
        const current = payments.get(id)
        if (current === undefined) return Effect.die(new Error(`no payment ${id}`))
        if (current.refund !== null) {
          return Effect.fail(new RefundExists({ paymentId: id, refundId: current.refund.id }))
        }
        complete(completion)
        payments.set(id, { ...current, refund })
        publish(outbox, refund)
        return Effect.void
      }),
    list: (query) =>
      Effect.sync(() =>
        [...payments.values()]
          .filter(
            (p) =>
              matchesFilter(p, query.filter) &&
              (query.after === undefined || isAfterCursor(p, query.after))
          )
          .sort(comparePayments(query.sortBy, query.direction))
          .slice(0, query.limit)
      ),
    stats: (filter) => Effect.sync(() => computeStats(payments.values(), filter))
  })

  /** What the database's foreign key refuses: a row for a payment that does not exist. */
  const requirePayment = (paymentId: string) => {
    if (!payments.has(paymentId)) throw new Error(`no payment ${paymentId}`)
  }
  /** The key is the account exactly as given: CAIP-10 addresses are case-sensitive on some chains. */
  const collectedKey = (paymentId: string, account: string) => JSON.stringify([paymentId, account])

  const gatewayStore = GatewayStore.of({
    insertOptions: (batch, cap) =>
      Effect.sync((): OptionsInserted => {
        // Every check before the first write, so a refused batch stores none of its options.
        const ids = new Set<string>()
        for (const option of batch) {
          if (ids.has(option.id) || options.has(option.id)) {
            throw new Error(`duplicate payment option ${option.id}`)
          }
          requirePayment(option.paymentId)
          ids.add(option.id)
        }
        const paymentId = batch[0]?.paymentId
        if (cap !== undefined && paymentId !== undefined) {
          const held = [...options.values()].filter((o) => o.paymentId === paymentId)
          const expired = held
            .filter((o) => o.expiresAt.getTime() <= cap.now.getTime())
            .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
          const over = held.length + batch.length - cap.max
          if (over > expired.length) return "full"
          for (const o of expired.slice(0, Math.max(over, 0))) options.delete(o.id)
        }
        for (const option of batch) options.set(option.id, option)
        return "inserted"
      }),
    findOption: (id) => Effect.sync(() => Option.fromNullable(options.get(id))),
    saveCollectedData: (record) =>
      Effect.sync(() => {
        requirePayment(record.paymentId)
        // Stored as JSON, as the databases do: what comes back is what JSON keeps.
        const data = JSON.parse(JSON.stringify(record.data)) as CollectedDataRecord["data"]
        collected.set(collectedKey(record.paymentId, record.account), { ...record, data })
      }),
    findCollectedData: (paymentId, account) =>
      Effect.sync(() => Option.fromNullable(collected.get(collectedKey(paymentId, account)))),
    purgeOptions: (expiredBefore, limit) =>
      Effect.sync(() => {
        let deleted = 0
        let kept = 0
        const candidates = [...options.values()]
          .filter(
            (o) =>
              !keptOptions.has(o.id) &&
              o.expiresAt.getTime() < expiredBefore.getTime() &&
              payments.get(o.paymentId)?.status !== "processing"
          )
          .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
          .slice(0, limit)
        for (const o of candidates) {
          if (paidWith(o)) {
            keptOptions.add(o.id)
            kept++
          } else {
            options.delete(o.id)
            deleted++
          }
        }
        return { deleted, kept }
      }),
    purgeCollectedData: (finalBefore, limit) =>
      Effect.sync(() => {
        let purged = 0
        for (const [key, record] of collected) {
          if (purged >= limit) break
          const p = payments.get(record.paymentId)
          const finalAt = p?.finalAt ?? (p?.status === "requires_action" ? p.expiresAt : undefined)
          if (finalAt === undefined || finalAt.getTime() >= finalBefore.getTime()) continue
          if (record.collectedAt.getTime() >= finalBefore.getTime()) continue
          collected.delete(key)
          purged++
        }
        return purged
      })
  })

  /** Each payment's job of each kind (the databases' unique key), found without a scan. */
  const jobsByPayment = new Map<string, JobRow>()
  const jobKey = (paymentId: string, kind: ChainJobKind) => `${paymentId}/${kind}`
  const jobOf = (paymentId: string, kind: ChainJobKind) =>
    jobsByPayment.get(jobKey(paymentId, kind))
  const putJob = (row: JobRow) => {
    jobs.set(row.job.id, row)
    jobsByPayment.set(jobKey(row.job.paymentId, row.job.kind), row)
  }

  /**
   * The write that queues `job`, checked before the writes it goes with: nothing when the
   * payment has a job of its kind already (the unique key's meaning); a defect when the job's
   * id is taken or its payment does not exist (what the databases refuse).
   */
  const enqueuing = (job: NewChainJob) => {
    const start = job.held
    refuseClaimed(job)
    if (jobOf(job.paymentId, job.payload.kind) !== undefined) {
      // A held job is run at once by its holder: it must be the one queued.
      if (start !== undefined)
        throw new Error(`payment ${job.paymentId} has a ${job.payload.kind} job`)
      return undefined
    }
    if (jobs.has(job.id)) throw new Error(`duplicate chain job ${job.id}`)
    requirePayment(job.paymentId)
    const takes = start?.transfer === undefined ? undefined : takingNonce(job.id, start.transfer)
    return () => {
      if (start === undefined) {
        putJob({ job: queuedJob(job), leaseToken: null, leaseUntil: null })
        return
      }
      takes?.()
      const transfer = start.transfer
      putJob({
        job: {
          ...queuedJob(job),
          attempts: 1,
          nonce: transfer?.nonce ?? null,
          destination: start.destination ?? null
        },
        leaseToken: start.lease.token,
        leaseUntil: start.leaseUntil.getTime()
      })
      if (transfer !== undefined) transfers.set(transfer.hash, transfer)
    }
  }

  /**
   * `TransactionClaimed` when `job` is a collect naming a buyer's transfer that another
   * payment's collect job names on the same chain (the databases' unique index): one payment
   * claims a transfer, whatever became of its job.
   */
  const refuseClaimed = (job: NewChainJob) => {
    const paid = job.payload.kind === "collect" ? job.payload.paid : undefined
    if (paid === undefined) return
    for (const { job: other } of jobs.values()) {
      if (
        other.paymentId !== job.paymentId &&
        other.chainId === job.chainId &&
        other.payload.kind === "collect" &&
        other.payload.paid?.hash === paid.hash
      ) {
        throw new TransactionClaimed({ chainId: job.chainId, hash: paid.hash })
      }
    }
  }

  /**
   * The write that takes `transfer`'s nonce from its sender's sequence, checked first:
   * `NonceTaken` when the sequence has passed it.
   */
  const takingNonce = (jobId: string, transfer: ChainTransfer) => {
    const key = JSON.stringify([transfer.chainId, transfer.sender])
    if ((nonces.get(key) ?? 0) > transfer.nonce) {
      throw new NonceTaken({ jobId, nonce: transfer.nonce })
    }
    return () => {
      nonces.set(key, transfer.nonce + 1)
    }
  }

  /** Ends a held job. */
  const endJob = (row: JobRow, now: Date) => {
    row.leaseToken = null
    row.leaseUntil = null
    row.job = { ...row.job, state: "done", updatedAt: now }
  }

  /** A write that the chain work can refuse: its refusals as failures, nothing changed. */
  const chainWrite = <A>(write: () => A) =>
    Effect.suspend((): Effect.Effect<A, ChainJobLeaseLost | NonceTaken> => {
      try {
        return Effect.succeed(write())
      } catch (error) {
        if (error instanceof ChainJobLeaseLost || error instanceof NonceTaken) {
          return Effect.fail(error)
        }
        throw error
      }
    })

  /** A payment change: the chain work's refusals, or a buyer's transfer claimed, nothing changed. */
  const changeWrite = <A>(write: () => A) =>
    Effect.suspend((): Effect.Effect<A, ChainJobLeaseLost | NonceTaken | TransactionClaimed> => {
      try {
        return Effect.succeed(write())
      } catch (error) {
        if (
          error instanceof ChainJobLeaseLost ||
          error instanceof NonceTaken ||
          error instanceof TransactionClaimed
        ) {
          return Effect.fail(error)
        }
        throw error
      }
    })

  /** The job's row while `lease` holds it; the lease lost otherwise. */
  const held = (lease: ChainJobLease) => {
    const row = jobs.get(lease.jobId)
    if (row === undefined || row.leaseToken === null || row.leaseToken !== lease.token) {
      throw new ChainJobLeaseLost({ jobId: lease.jobId })
    }
    return row
  }

  /** A fenced write: `f` runs on the held row, or the lease is lost and nothing changes. */
  const fenced = <A>(lease: ChainJobLease, f: (row: JobRow) => A) =>
    Effect.suspend(() => {
      try {
        return Effect.succeed(f(held(lease)))
      } catch (error) {
        if (error instanceof ChainJobLeaseLost) return Effect.fail(error)
        throw error
      }
    })

  const transfersAt = (jobId: string, nonce: number | null) =>
    nonce === null
      ? []
      : [...transfers.values()]
          .filter((t) => t.jobId === jobId && t.nonce === nonce)
          .sort(byCreation)

  const chainJobStore = ChainJobStore.of({
    claimDue: (now, limit, leaseMs) =>
      Effect.sync(() => {
        const at = now.getTime()
        const due = [...jobs.values()]
          .filter(
            (r) =>
              r.job.state === "active" &&
              r.job.runAt.getTime() <= at &&
              (r.leaseUntil === null || r.leaseUntil <= at)
          )
          .sort(
            (a, b) =>
              a.job.runAt.getTime() - b.job.runAt.getTime() || (a.job.id < b.job.id ? -1 : 1)
          )
          .slice(0, Math.max(0, limit))
        return due.map((row) => {
          row.leaseToken = randomBase62(24)
          row.leaseUntil = at + leaseMs
          row.job = { ...row.job, attempts: row.job.attempts + 1, updatedAt: now }
          return {
            job: row.job,
            lease: { jobId: row.job.id, token: row.leaseToken },
            transfers: transfersAt(row.job.id, row.job.nonce)
          }
        })
      }),
    renew: (lease, now, leaseMs) =>
      fenced(lease, (row) => {
        row.leaseUntil = now.getTime() + leaseMs
      }),
    release: (lease, runAt, lastError, now, failing) =>
      fenced(lease, (row) => {
        row.leaseToken = null
        row.leaseUntil = null
        row.job = { ...row.job, runAt, lastError, ...failing, updatedAt: now }
      }),
    nextNonce: (chainId, sender, chainNext) =>
      Effect.sync(() => Math.max(nonces.get(JSON.stringify([chainId, sender])) ?? 0, chainNext)),
    dropNonce: (lease, now) =>
      fenced(lease, (row) => {
        row.job = { ...row.job, nonce: null, updatedAt: now }
      }),
    setDestination: (lease, destination, now) =>
      fenced(lease, (row) => {
        row.job = { ...row.job, destination, updatedAt: now }
      }),
    recordTransfer: (lease, transfer, payment) =>
      chainWrite(() => {
        const row = held(lease)
        if (row.job.nonce !== null && row.job.nonce !== transfer.nonce) {
          throw new Error(`job ${row.job.id} holds nonce ${row.job.nonce}, not ${transfer.nonce}`)
        }
        if (row.job.nonce === null) {
          takingNonce(row.job.id, transfer)()
          row.job = { ...row.job, nonce: transfer.nonce, updatedAt: transfer.createdAt }
        }
        // A transaction recorded again (the same signed bytes) is kept as first recorded.
        if (!transfers.has(transfer.hash)) transfers.set(transfer.hash, transfer)
        const paid = payment === undefined ? undefined : payments.get(payment.id)
        if (payment !== undefined && paid?.status === "processing") {
          payments.set(paid.id, {
            ...paid,
            transaction: payment.transaction,
            updatedAt: payment.at
          })
        }
      }),
    complete: (lease, now, settlement) =>
      fenced(lease, (row) => {
        endJob(row, now)
        if (settlement !== undefined) {
          const payment = payments.get(settlement.paymentId)
          if (payment !== undefined) {
            payments.set(payment.id, { ...payment, settlement: settlement.settlement })
          }
          for (const event of settlement.events ?? []) record(event)
        }
      }),
    requeue: (job, kind, entries) =>
      Effect.sync(() => {
        if (job.payload.kind !== kind)
          throw new Error(`a ${job.payload.kind} job queued as ${kind}`)
        const existing = jobOf(job.paymentId, kind)
        if (existing?.job.state === "active") return false
        // What the databases' unique index refuses, a defect here as there.
        refuseClaimed(job)
        // Queued again, a held settlement is under way: `pending` from here.
        const payment = payments.get(job.paymentId)
        if (payment?.settlement?.status === "held") {
          payments.set(payment.id, {
            ...payment,
            settlement: { ...payment.settlement, status: "pending" }
          })
        }
        // An operator's override is recorded only with the queueing it came with.
        if (entries !== undefined) audit(entries)
        if (existing === undefined) {
          enqueuing(job)?.()
          return true
        }
        existing.leaseToken = null
        existing.leaseUntil = null
        existing.job = {
          ...existing.job,
          chainId: job.chainId,
          payload: job.payload,
          runAt: job.runAt,
          state: "active",
          nonce: null,
          destination: null,
          lastError: null,
          ...NOT_FAILING,
          updatedAt: job.createdAt
        }
        return true
      }),
    findByPayment: (paymentId, kind) =>
      Effect.sync(() => Option.fromNullable(jobOf(paymentId, kind)?.job)),
    transfersOf: (jobId) =>
      Effect.sync(() => [...transfers.values()].filter((t) => t.jobId === jobId).sort(byCreation)),
    transfersAtNonce: (chainId, sender, nonce) =>
      Effect.sync(() =>
        [...transfers.values()]
          .filter(
            (t) =>
              t.chainId === chainId &&
              t.sender.toLowerCase() === sender.toLowerCase() &&
              t.nonce === nonce
          )
          .sort(byCreation)
          .map((transfer) => ({ transfer, job: jobs.get(transfer.jobId)!.job }))
      ),
    recordReplacement: (transfer) =>
      Effect.sync(() => {
        const row = jobs.get(transfer.jobId)
        if (row === undefined || row.job.state !== "done") return false
        if (!transfers.has(transfer.hash)) transfers.set(transfer.hash, transfer)
        return true
      }),
    swapChainInstance: (chainId, instance, now) =>
      Effect.sync(() => {
        const previous = chainInstances.get(chainId)
        if (previous?.instance !== instance) {
          chainInstances.set(chainId, { instance, since: now })
          for (const key of [...nonces.keys()]) {
            if ((JSON.parse(key) as [string, string])[0] === chainId) nonces.delete(key)
          }
          for (const [hash, t] of [...transfers]) if (t.chainId === chainId) transfers.delete(hash)
        }
        return Option.fromNullable(previous)
      }),
    chainInstance: (chainId) => Effect.sync(() => Option.fromNullable(chainInstances.get(chainId))),
    activeJobsOn: (chainId) =>
      Effect.sync(() =>
        [...jobs.values()]
          .filter((r) => r.job.state === "active" && r.job.chainId === chainId)
          .map((r) => r.job)
      ),
    endJob: (jobId, lastError, now) =>
      Effect.sync(() => {
        const row = jobs.get(jobId)
        if (row === undefined || row.job.state !== "active") return false
        endJob(row, now)
        row.job = { ...row.job, lastError }
        return true
      }),
    recordReturnable: (funds) =>
      Effect.sync(() => {
        requirePayment(funds.paymentId)
        const key = JSON.stringify([funds.chainId, funds.txHash])
        if (!returnables.has(key)) returnables.set(key, funds)
      }),
    returnable: (limit) =>
      Effect.sync(() =>
        [...returnables.values()]
          .sort(
            (a, b) =>
              b.recordedAt.getTime() - a.recordedAt.getTime() ||
              (a.chainId < b.chainId ? 1 : a.chainId > b.chainId ? -1 : 0) ||
              (a.txHash < b.txHash ? 1 : a.txHash > b.txHash ? -1 : 0)
          )
          .slice(0, Math.max(0, limit))
      ),
    owedIn: (asset) =>
      Effect.sync(() => {
        let owed = 0n
        for (const p of payments.values()) {
          const status = p.settlement?.status
          if (
            p.status === "succeeded" &&
            p.tokenAmount?.asset === asset &&
            p.settlement !== null &&
            status !== "settled"
          ) {
            owed += p.settlement.amount
          }
        }
        for (const funds of returnables.values()) if (funds.asset === asset) owed += funds.value
        return owed
      })
  })

  const logoStore = LogoStore.of({
    put: (logo) =>
      Effect.sync(() => {
        if (!logos.has(logo.name)) logos.set(logo.name, logo)
      }),
    get: (name, size) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(logos.get(name)), (logo) => ({
          contentType: logo.contentType,
          bytes: (size === undefined ? undefined : logo.sizes.get(size)) ?? logo.master
        }))
      )
  })

  let engineSecret: string | undefined
  const engineSecretStore = EngineSecretStore.of({
    getOrCreate: (candidate) => Effect.sync(() => (engineSecret ??= candidate)),
    find: Effect.sync(() => Option.fromNullable(engineSecret))
  })

  const matches = (q: EventQuery) => (e: PayEvent) =>
    e.partnerId === q.partnerId &&
    (q.types === undefined || q.types.includes(e.type)) &&
    (q.paymentId === undefined || e.paymentId === q.paymentId) &&
    (q.from === undefined || e.createdAt.getTime() >= q.from.getTime()) &&
    (q.to === undefined || e.createdAt.getTime() < q.to.getTime())
  const eventStore = EventStore.of({
    find: (id) => Effect.sync(() => Option.fromNullable(events.find((e) => e.id === id))),
    list: (q) =>
      Effect.sync(() => {
        const end =
          q.before === undefined ? events.length : events.findIndex((e) => e.id === q.before)
        return events.slice(0, Math.max(0, end)).filter(matches(q)).reverse().slice(0, q.limit)
      })
  })

  /** Changes a live endpoint; a deleted one (or none) is not changed. */
  const changeEndpoint = (id: WebhookEndpointId, f: (e: WebhookEndpoint) => WebhookEndpoint) => {
    const current = endpoints.get(id)
    if (current === undefined || current.deletedAt !== null) return Option.none<WebhookEndpoint>()
    const next = f(current)
    endpoints.set(id, next)
    return Option.some(next)
  }
  const webhookEndpointStore = WebhookEndpointStore.of({
    insert: (endpoint, completion) =>
      Effect.sync(() => {
        complete(completion)
        endpoints.set(endpoint.id, endpoint)
      }),
    find: (id) => Effect.sync(() => Option.fromNullable(endpoints.get(id))),
    list: (partnerId) =>
      Effect.sync(() =>
        [...endpoints.values()]
          .filter((e) => e.partnerId === partnerId && e.deletedAt === null)
          .sort((a, b) => (a.id < b.id ? 1 : -1))
      ),
    update: (id, c, at) =>
      Effect.sync(() => {
        // Enabled again: a run of failures that disabled it starts over.
        if (c.status === "enabled") failingSince.delete(id)
        return changeEndpoint(
          id,
          (e) =>
            new WebhookEndpoint({
              ...e,
              url: c.url ?? e.url,
              events: c.events === undefined ? e.events : c.events,
              description: c.description === undefined ? e.description : c.description,
              status: c.status ?? e.status,
              disabledReason: c.disabledReason === undefined ? e.disabledReason : c.disabledReason,
              updatedAt: at
            })
        )
      }),
    rotateSecret: (id, rotation, at, completion) =>
      Effect.sync(() => {
        const current = endpoints.get(id)
        if (current === undefined || current.deletedAt !== null) return Option.none()
        complete(completion)
        return changeEndpoint(
          id,
          (e) =>
            new WebhookEndpoint({
              ...e,
              ...rotation,
              // The stored secret, as the SQL stores copy their column (see SecretRotation).
              previousSecret: rotation.previousSecret === null ? null : e.secret,
              updatedAt: at
            })
        )
      }),
    markDeleted: (id, at) =>
      Effect.sync(() => {
        changeEndpoint(id, (e) => new WebhookEndpoint({ ...e, deletedAt: at }))
        return Option.fromNullable(endpoints.get(id))
      })
  })

  const sealedIn = (field: SealedField, e: WebhookEndpoint) =>
    field === "webhookEndpoints.secret" ? e.secret : e.previousSecret
  const sealedValueStore = SealedValueStore.of({
    page: (field, after, limit) =>
      Effect.sync(() =>
        [...endpoints.values()]
          .filter((e) => (after === null || e.id > after) && sealedIn(field, e) !== null)
          .sort((a, b) => (a.id < b.id ? -1 : 1))
          .slice(0, limit)
          .map((e) => ({ id: e.id, sealed: sealedIn(field, e)! }))
      ),
    read: (field, id) =>
      Effect.sync(() =>
        Option.flatMapNullable(Option.fromNullable(endpoints.get(id as WebhookEndpointId)), (e) =>
          sealedIn(field, e)
        )
      ),
    replace: (field, id, expected, replacement) =>
      Effect.sync(() => {
        const e = endpoints.get(id as WebhookEndpointId)
        if (e === undefined || sealedIn(field, e) !== expected) return false
        endpoints.set(
          e.id,
          new WebhookEndpoint(
            field === "webhookEndpoints.secret"
              ? { ...e, secret: replacement }
              : { ...e, previousSecret: replacement }
          )
        )
        return true
      })
  })

  const eventById = (id: string) => events.find((e) => e.id === id)!
  const recordOf = (row: DeliveryRow): WebhookDeliveryRecord => ({
    delivery: row.delivery,
    eventType: eventById(row.delivery.eventId).type,
    attempts: [...row.attempts].reverse()
  })
  const rowOf = (endpointId: string, eventId: string) =>
    deliveries.find((d) => d.delivery.endpointId === endpointId && d.delivery.eventId === eventId)
  const heldRow = (lease: WebhookDeliveryLease) => {
    const row = rowOf(lease.endpointId, lease.eventId)
    return row !== undefined && row.leaseToken === lease.token ? row : undefined
  }
  const newestFirst = (a: DeliveryRow, b: DeliveryRow) => b.seq - a.seq
  const webhookDeliveryStore = WebhookDeliveryStore.of({
    list: (q) =>
      Effect.sync(() => {
        const before = q.before === undefined ? undefined : rowOf(q.endpointId, q.before)?.seq
        return deliveries
          .filter(
            (d) =>
              d.delivery.endpointId === q.endpointId &&
              (q.state === undefined || d.delivery.state === q.state) &&
              (q.before === undefined || (before !== undefined && d.seq < before))
          )
          .sort(newestFirst)
          .slice(0, q.limit)
          .map(recordOf)
      }),
    find: (endpointId, eventId) =>
      Effect.sync(() => Option.map(Option.fromNullable(rowOf(endpointId, eventId)), recordOf)),
    claimDue: (now, limit, leaseMs, perEndpoint, perPartner = Number.MAX_SAFE_INTEGER) =>
      Effect.sync(() => {
        const at = now.getTime()
        const live = (d: DeliveryRow) => d.leaseUntil !== null && d.leaseUntil > at
        const inFlight = new Map<string, number>()
        const partnerOf = (endpointId: WebhookEndpointId) =>
          `partner:${endpoints.get(endpointId)?.partnerId}`
        const count = (key: string) => inFlight.set(key, (inFlight.get(key) ?? 0) + 1)
        for (const d of deliveries) {
          if (live(d)) {
            count(d.delivery.endpointId)
            count(partnerOf(d.delivery.endpointId))
          }
        }
        const waitsForEarlier = (d: DeliveryRow) =>
          d.delivery.paymentId !== null &&
          deliveries.some(
            (e) =>
              e.delivery.endpointId === d.delivery.endpointId &&
              e.delivery.paymentId === d.delivery.paymentId &&
              e.delivery.state === "pending" &&
              e.seq < d.seq
          )
        const due = deliveries
          .filter((d) => {
            const endpoint = endpoints.get(d.delivery.endpointId)
            return (
              d.delivery.state === "pending" &&
              d.delivery.nextAttemptAt.getTime() <= at &&
              !live(d) &&
              endpoint !== undefined &&
              endpoint.status === "enabled" &&
              endpoint.deletedAt === null &&
              !waitsForEarlier(d)
            )
          })
          .sort(
            (a, b) =>
              a.delivery.nextAttemptAt.getTime() - b.delivery.nextAttemptAt.getTime() ||
              a.seq - b.seq
          )
        const claimed: Array<ClaimedDelivery> = []
        for (const row of due) {
          if (claimed.length >= limit) break
          const endpointId = row.delivery.endpointId
          const busy = inFlight.get(endpointId) ?? 0
          if (busy >= perEndpoint) continue
          if ((inFlight.get(partnerOf(endpointId)) ?? 0) >= perPartner) continue
          inFlight.set(endpointId, busy + 1)
          count(partnerOf(endpointId))
          row.leaseToken = randomBase62(24)
          row.leaseUntil = at + leaseMs
          claimed.push({
            lease: { endpointId, eventId: row.delivery.eventId, token: row.leaseToken },
            attempts: row.delivery.attempts,
            event: eventById(row.delivery.eventId),
            endpoint: endpoints.get(endpointId)!
          })
        }
        return claimed
      }),
    record: (lease, outcome) =>
      Effect.suspend(() => {
        const row = heldRow(lease)
        if (row === undefined) return new WebhookDeliveryLeaseLost({ eventId: lease.eventId })
        row.attempts.push(outcome.attempt)
        row.leaseToken = null
        row.leaseUntil = null
        row.delivery = new WebhookDelivery({
          ...row.delivery,
          state: outcome.state,
          attempts: row.delivery.attempts + 1,
          nextAttemptAt: outcome.nextAttemptAt
        })
        const at = outcome.attempt.attemptedAt
        const verdict = outcome.endpoint
        const disable = (reason: string) =>
          changeEndpoint(
            lease.endpointId,
            (e) =>
              new WebhookEndpoint({
                ...e,
                status: "disabled",
                disabledReason: e.status === "enabled" ? reason : e.disabledReason,
                updatedAt: e.status === "enabled" ? at : e.updatedAt
              })
          )
        if (verdict._tag === "Succeeded") failingSince.delete(lease.endpointId)
        else if (verdict._tag === "Gone") disable(verdict.reason)
        else {
          const since = failingSince.get(lease.endpointId) ?? at
          failingSince.set(lease.endpointId, since)
          if (since.getTime() <= verdict.disableIfFailingSince.getTime()) disable(verdict.reason)
        }
        return Effect.void
      }),
    release: (lease, now) =>
      Effect.sync(() => {
        const row = heldRow(lease)
        if (row === undefined) return
        row.leaseToken = null
        row.leaseUntil = null
        row.delivery = new WebhookDelivery({ ...row.delivery, nextAttemptAt: now })
      }),
    redeliver: (endpointId, event, now) =>
      Effect.sync(() => {
        const row = rowOf(endpointId, event.id)
        if (row === undefined) {
          queue(endpointId, event)
          const added = deliveries[deliveries.length - 1]!
          added.delivery = new WebhookDelivery({
            ...added.delivery,
            nextAttemptAt: now,
            createdAt: now
          })
          return added.delivery
        }
        row.delivery = new WebhookDelivery({
          ...row.delivery,
          state: "pending",
          attempts: 0,
          nextAttemptAt: now
        })
        return row.delivery
      }),
    queueDirect: (event, endpointId) =>
      Effect.sync(() => {
        writeEvent(event)
        queue(endpointId, event)
        return deliveries[deliveries.length - 1]!.delivery
      })
  })

  /** The shared rate limit buckets, with the settings they were last written with. */
  const rateBuckets = new Map<string, BucketLevel & TokenBucketSettings>()
  const rateLimitStore = RateLimitStore.of({
    sync: (uses, at) =>
      Effect.sync(() =>
        uses.map(({ key, taken, perSecond, burst }) => {
          const settings = { perSecond, burst }
          const now = at.getTime()
          const row = rateBuckets.get(key)
          const level = row === undefined ? fullBucket(settings, now) : refill(row, settings, now)
          const millitokens = level.millitokens - taken * MILLITOKENS_PER_TOKEN
          rateBuckets.set(key, { millitokens, at: level.at, ...settings })
          return { key, millitokens }
        })
      ),
    purge: (at) =>
      Effect.sync(() => {
        let removed = 0
        for (const [key, row] of rateBuckets) {
          if (isFull(row, row, at.getTime())) {
            rateBuckets.delete(key)
            removed++
          }
        }
        return removed
      })
  })

  // Nothing to migrate in memory; the queue as the databases count it.
  const storageProbe = StorageProbe.of({
    migrations: Effect.succeed({ applied: 0, latestApplied: null, latestKnown: 0, known: 0 }),
    chainJobQueue: (now) =>
      Effect.sync(() => {
        const active = [...jobs.values()].filter((r) => r.job.state === "active")
        const due = active.filter((r) => r.job.runAt.getTime() <= now.getTime())
        const dueSince = active.flatMap((r) =>
          r.job.failingSince !== null
            ? [r.job.failingSince.getTime()]
            : r.job.runAt.getTime() <= now.getTime()
              ? [r.job.runAt.getTime()]
              : []
        )
        return {
          active: active.length,
          due: due.length,
          oldestDueAt: dueSince.length === 0 ? null : new Date(Math.min(...dueSince)),
          stuck: active.filter((r) => r.job.stuckSince !== null).length
        }
      }),
    stuckJobs: (limit) =>
      Effect.sync(() =>
        [...jobs.values()]
          .filter((r) => r.job.state === "active" && r.job.stuckSince !== null)
          .sort((a, b) => a.job.stuckSince!.getTime() - b.job.stuckSince!.getTime())
          .slice(0, limit)
          .map(({ job }) => ({
            id: job.id,
            kind: job.kind,
            paymentId: job.paymentId,
            chainId: job.chainId,
            stuckSince: job.stuckSince!,
            failingSince: job.failingSince,
            failures: job.failures,
            lastError: job.lastError
          }))
      )
  })

  /** The leases instances take turns with (the purge's), by name. */
  const leases = new Map<string, { holder: string; until: number }>()
  /** Removes the first `limit` rows of `rows` that `purgeable` picks, in order; the removed. */
  const removeFirst = <A>(rows: Array<A>, limit: number, purgeable: (row: A) => boolean) => {
    const removed: Array<A> = []
    for (let i = 0; i < rows.length && removed.length < limit; ) {
      if (purgeable(rows[i]!)) removed.push(...rows.splice(i, 1))
      else i++
    }
    return removed
  }
  const retentionStore = RetentionStore.of({
    purgeEvents: (before, limit) =>
      Effect.sync(() => {
        const delivered = new Set(deliveries.map((d) => d.delivery.eventId))
        const removed = removeFirst(
          events,
          limit,
          (e) => e.createdAt.getTime() < before.getTime() && !delivered.has(e.id)
        )
        for (const e of removed) eventSeq.delete(e.id)
        return removed.length
      }),
    purgeWebhookDeliveries: (before, limit) =>
      Effect.sync(() => {
        const over = deliveries
          .filter(
            (d) =>
              d.delivery.state !== "pending" &&
              d.delivery.nextAttemptAt.getTime() < before.getTime()
          )
          .sort((a, b) => a.delivery.nextAttemptAt.getTime() - b.delivery.nextAttemptAt.getTime())
          .slice(0, limit)
        const gone = new Set(over)
        removeFirst(deliveries, limit, (d) => gone.has(d))
        return {
          deliveries: over.length,
          attempts: over.reduce((sum, d) => sum + d.attempts.length, 0)
        }
      }),
    purgeAuditTrail: (before, limit) =>
      Effect.sync(
        () => removeFirst(auditEntries, limit, (e) => e.at.getTime() < before.getTime()).length
      ),
    takeLease: (name, holder, now, until) =>
      Effect.sync(() => {
        const held = leases.get(name)
        if (held !== undefined && held.holder !== holder && held.until > now.getTime()) {
          return false
        }
        leases.set(name, { holder, until: until.getTime() })
        return true
      }),
    extendLease: (name, holder, until) =>
      Effect.sync(() => {
        const held = leases.get(name)
        if (held?.holder !== holder) return false
        held.until = until.getTime()
        return true
      })
  })

  const layer = Layer.mergeAll(
    Layer.succeed(StorageProbe, storageProbe),
    Layer.succeed(RateLimitStore, rateLimitStore),
    Layer.succeed(AuditStore, auditStore),
    Layer.succeed(WebhookDeliveryStore, webhookDeliveryStore),
    Layer.succeed(WebhookEndpointStore, webhookEndpointStore),
    Layer.succeed(EventStore, eventStore),
    Layer.succeed(EngineSecretStore, engineSecretStore),
    Layer.succeed(SealedValueStore, sealedValueStore),
    Layer.succeed(LogoStore, logoStore),
    Layer.succeed(PaymentStore, paymentStore),
    Layer.succeed(ChainJobStore, chainJobStore),
    Layer.succeed(GatewayStore, gatewayStore),
    Layer.succeed(PartnerStore, partnerStore),
    Layer.succeed(KeyStore, keyStore),
    Layer.succeed(WalletAppStore, walletAppStore),
    Layer.succeed(MerchantStore, merchantStore),
    Layer.succeed(SettlementStore, settlementStore),
    Layer.succeed(IdempotencyStore, idempotencyStore),
    Layer.succeed(RetentionStore, retentionStore)
  )
  const deliveriesClaimed = () => deliveries.filter((d) => d.leaseToken !== null).length
  const nextDueAt = (at: number) =>
    [
      ...[...jobs.values()]
        .filter((r) => r.job.state === "active" && r.leaseToken === null)
        .map((r) => r.job.runAt.getTime()),
      ...deliveries
        .filter((d) => d.delivery.state === "pending" && d.leaseToken === null)
        .map((d) => d.delivery.nextAttemptAt.getTime()),
      ...[...payments.values()]
        .filter((p) => p.status === "requires_action")
        .map((p) => p.expiresAt.getTime())
    ]
      .filter((t) => t > at)
      .reduce<number | undefined>((a, b) => (a === undefined || b < a ? b : a), undefined)
  return { layer, deliveriesClaimed, nextDueAt }
}

/** A fresh, empty in-memory storage for each use of the layer. */
export const MemoryStorage = Layer.suspend(makeMemoryStorage)
