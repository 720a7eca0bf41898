/**
 * The re-seal after a rotation of the engine's secret (`npm run pay -- secret
 * reseal`): every stored sealed value that opens under a previous secret is
 * sealed again under the current one, the same plaintext (a webhook endpoint
 * keeps its signing secret), so the previous secrets can then be dropped.
 *
 * Safe beside running servers: a value is rewritten only if it still holds
 * what was read (a rotation or another re-seal may write it meanwhile; it is
 * then read again). Idempotent: values already under the current secret are
 * left alone. A value no configured secret opens is reported and left as it
 * is: it may open again once its secret is configured.
 *
 * Not covered: idempotency records (a replay's answer may hold a secret
 * sealed under the secret of its time); they expire after 48 hours, so the
 * previous secret stays configured that long for replays.
 */
import { Effect, Either, Option } from "effect"
import { EngineSecret, WEBHOOK_SECRET_PURPOSE } from "./EngineSecret.js"
import {
  SEALED_FIELDS,
  type SealedField,
  type SealedValue,
  SealedValueStore
} from "./SealedValueStore.js"

/** What each field is sealed for (`EngineSecret`'s purposes). */
const PURPOSES: Record<SealedField, string> = {
  "webhookEndpoints.secret": WEBHOOK_SECRET_PURPOSE,
  "webhookEndpoints.previousSecret": WEBHOOK_SECRET_PURPOSE
}

const PAGE_SIZE = 200
/** Tries for a value others keep rewriting between our read and our write. */
const MAX_TRIES = 5

export interface SealedValueRef {
  readonly field: SealedField
  readonly id: string
}

export interface FieldCounts {
  /** Sealed again under the current secret: they opened under a previous one. */
  readonly resealed: number
  /** Already under the current secret: left alone. */
  readonly current: number
  /** Opened by no configured secret: left as they are. */
  readonly unopenable: number
}

export interface ResealReport extends FieldCounts {
  readonly fields: Readonly<Record<SealedField, FieldCounts>>
  /** The values no configured secret opens. */
  readonly unopenableValues: ReadonlyArray<SealedValueRef>
  /** Values rewritten by others at every try: a run again takes them. */
  readonly changing: ReadonlyArray<SealedValueRef>
}

type Outcome = "resealed" | "current" | "unopenable" | "changing" | "gone"

/** Re-seals every stored sealed value under the current secret; what it found. */
export const resealStoredValues = Effect.gen(function* () {
  const secrets = yield* EngineSecret
  const store = yield* SealedValueStore

  const one = (field: SealedField, id: string, read: string) =>
    Effect.gen(function* () {
      let sealed = read
      for (let i = 0; i < MAX_TRIES; i++) {
        const next = yield* Effect.either(secrets.reseal(PURPOSES[field], sealed))
        if (Either.isLeft(next)) return "unopenable" satisfies Outcome
        if (Option.isNone(next.right)) return "current" satisfies Outcome
        if (yield* store.replace(field, id, sealed, next.right.value)) {
          return "resealed" satisfies Outcome
        }
        // Written meanwhile (a rotation, another re-seal): take what it holds now.
        const now = yield* store.read(field, id)
        if (Option.isNone(now)) return "gone" satisfies Outcome
        sealed = now.value
      }
      return "changing" satisfies Outcome
    })

  const fields = {} as Record<SealedField, FieldCounts>
  const unopenableValues: Array<SealedValueRef> = []
  const changing: Array<SealedValueRef> = []
  for (const field of SEALED_FIELDS) {
    const counts = { resealed: 0, current: 0, unopenable: 0 }
    let after: string | null = null
    while (true) {
      const page: ReadonlyArray<SealedValue> = yield* store.page(field, after, PAGE_SIZE)
      for (const value of page) {
        const outcome: Outcome = yield* one(field, value.id, value.sealed)
        if (outcome === "resealed" || outcome === "current") counts[outcome]++
        else if (outcome === "unopenable") {
          counts.unopenable++
          unopenableValues.push({ field, id: value.id })
        } else if (outcome === "changing") changing.push({ field, id: value.id })
      }
      if (page.length < PAGE_SIZE) break
      after = page[page.length - 1]!.id
    }
    fields[field] = counts
  }
  const total = (key: keyof FieldCounts) =>
    SEALED_FIELDS.reduce((sum, field) => sum + fields[field][key], 0)
  return {
    resealed: total("resealed"),
    current: total("current"),
    unopenable: total("unopenable"),
    fields,
    unopenableValues,
    changing
  } satisfies ResealReport as ResealReport
}).pipe(Effect.withSpan("Reseal.resealStoredValues"))
