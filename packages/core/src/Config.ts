/**
 * The engine's own settings, given by whoever runs it (the standalone server
 * reads them from the environment; an embedding platform passes them).
 */
import { Context } from "effect"

export interface PayConfigShape {
  /** Public base URL for buyer links, data-collection pages and logos (WIRE.md). */
  readonly publicUrl: string
  /** Request bodies larger than this are refused with 413. */
  readonly maxBodyBytes: number
}

export class PayConfig extends Context.Tag("@pay/core/PayConfig")<PayConfig, PayConfigShape>() {}
