/**
 * The engine's mode, decided once at start from its networks (`livemodeOf`):
 * `false` when every network is a test network. Each payment records the mode
 * it was created in.
 */
import { Context } from "effect"

export class EngineMode extends Context.Tag("@pay/core/EngineMode")<
  EngineMode,
  { readonly livemode: boolean }
>() {}
