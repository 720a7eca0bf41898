/**
 * Date-based API versions (SPEC.md section 9). A request picks one with a
 * header; without one, the partner's pinned version applies.
 */
import { Schema } from "effect"

export const API_VERSIONS = ["2026-02-18", "2026-02-19.preview"] as const
export const ApiVersion = Schema.Literal(...API_VERSIONS)
export type ApiVersion = typeof ApiVersion.Type
export const DEFAULT_API_VERSION: ApiVersion = "2026-02-18"

export const isApiVersion = (value: string): value is ApiVersion =>
  (API_VERSIONS as ReadonlyArray<string>).includes(value)

/** Request headers that select a version, strongest first (WIRE.md section 3). */
export const VERSION_HEADERS = ["Pay-Version", "WCP-Version", "Api-Version"] as const
