/**
 * Where the stores keep values sealed under the engine's secret, for the
 * re-seal after a rotation (Reseal.ts): every such field is named here, and
 * each store lists a field's values and rewrites one only if it still holds
 * what was read, so a re-seal beside running servers never overwrites their
 * writes. A new sealed column is added here, and to every store.
 */
import { Context, type Effect, type Option } from "effect"

/** Every stored field that holds a sealed value (deleted rows' included). */
export const SEALED_FIELDS = [
  /** Webhook endpoints' signing secrets. */
  "webhookEndpoints.secret",
  /** The signing secret before the last rotation, while it still signs (or after). */
  "webhookEndpoints.previousSecret"
] as const
export type SealedField = (typeof SEALED_FIELDS)[number]

export interface SealedValue {
  /** The row's id (`whep_…`). */
  readonly id: string
  readonly sealed: string
}

export class SealedValueStore extends Context.Tag("@pay/core/SealedValueStore")<
  SealedValueStore,
  {
    /** The field's values with ids after `after` (all when null), by id, at most `limit`; rows without one are left out. */
    readonly page: (
      field: SealedField,
      after: string | null,
      limit: number
    ) => Effect.Effect<ReadonlyArray<SealedValue>>
    /** The field's value in row `id` now; none when the row has none. */
    readonly read: (field: SealedField, id: string) => Effect.Effect<Option.Option<string>>
    /** Writes `replacement` only where the field still holds `expected`; whether it did. */
    readonly replace: (
      field: SealedField,
      id: string,
      expected: string,
      replacement: string
    ) => Effect.Effect<boolean>
  }
>() {}
