/**
 * The engine's log lines: Effect's own `Logger`, set up from `{ level, format }`.
 * `json` writes one JSON object per line (`time`, `level`, `message`, then the
 * annotations: requestId, partnerId, paymentId…, and the spans), for a log
 * collector; `pretty` one readable line, for a terminal. Every `Effect.log*`
 * of the engine (requests, chain work, webhooks, sweeps) goes through it, and
 * the request line (`requestLogObserver`) is written with it without a fiber.
 */
import {
  Cause,
  Console,
  Context,
  DefaultServices,
  Effect,
  FiberId,
  FiberRef,
  FiberRefs,
  HashMap,
  HashSet,
  List,
  Logger,
  LogLevel
} from "effect"
import type { RequestObserver } from "../http/RequestOutcome.js"

export const LOG_LEVELS = ["trace", "debug", "info", "warning", "error", "none"] as const
export type LogLevelName = (typeof LOG_LEVELS)[number]

export const LOG_FORMATS = ["json", "pretty"] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export interface LoggingSettings {
  /** The least severe lines written; `none` writes none. Default `info`. */
  readonly level?: LogLevelName | undefined
  /** Default `json`. */
  readonly format?: LogFormat | undefined
}

export const DEFAULT_LOG_LEVEL: LogLevelName = "info"
export const DEFAULT_LOG_FORMAT: LogFormat = "json"

export const isLogLevelName = (s: unknown): s is LogLevelName =>
  (LOG_LEVELS as ReadonlyArray<unknown>).includes(s)

export const isLogFormat = (s: unknown): s is LogFormat =>
  (LOG_FORMATS as ReadonlyArray<unknown>).includes(s)

const LEVELS: Record<LogLevelName, LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

export const logLevelOf = (name: LogLevelName): LogLevel.LogLevel => LEVELS[name]

/** The name a line carries for Effect's level (`Fatal` has none of its own to set). */
const levelName = (level: LogLevel.LogLevel): string =>
  level._tag === "Warning" ? "warning" : level._tag.toLowerCase()

/** Whatever a value is, as text, never throwing (a cycle, a BigInt). */
const textOf = (value: unknown): string => {
  if (typeof value === "string") return value
  if (value instanceof Error) return value.message
  try {
    return (
      JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v)) ?? String(value)
    )
  } catch {
    return String(value)
  }
}

const isFields = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype

/** A value as it goes into a JSON line: kept when JSON keeps it, else as text. */
const jsonValue = (value: unknown): unknown =>
  value === null ||
  typeof value === "string" ||
  typeof value === "boolean" ||
  (typeof value === "number" && Number.isFinite(value))
    ? value
    : textOf(value)

// Fields never take the place of the line's own.
const RESERVED = new Set(["time", "level", "message", "spans", "cause"])

const put = (line: Record<string, unknown>, key: string, value: unknown) => {
  line[RESERVED.has(key) ? `field.${key}` : key] = jsonValue(value)
}

/** The request's id first, then the rest by name: the same order on every line. */
const byName = (a: readonly [string, unknown], b: readonly [string, unknown]) =>
  a[0] === "requestId" ? -1 : b[0] === "requestId" ? 1 : a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0

/**
 * The fields of one line, in the order both formats write them: time, level,
 * message, the message's own fields, the annotations, the spans, the cause.
 * `Effect.log("a", "b")` logs `["a", "b"]`, one message `a b`; a plain object
 * among the parts (`Effect.logInfo("request", { status: 200 })`) gives fields.
 */
const fieldsOf = (options: Logger.Logger.Options<unknown>): Record<string, unknown> => {
  const parts: ReadonlyArray<unknown> = Array.isArray(options.message)
    ? options.message
    : [options.message]
  let message = ""
  const own: Array<Record<string, unknown>> = []
  for (const part of parts) {
    if (isFields(part)) own.push(part)
    else message = message === "" ? textOf(part) : `${message} ${textOf(part)}`
  }
  const line: Record<string, unknown> = {
    time: options.date.toISOString(),
    level: levelName(options.logLevel),
    message
  }
  for (const fields of own) for (const key in fields) put(line, key, fields[key])
  if (HashMap.size(options.annotations) > 0) {
    for (const [key, value] of Array.from(options.annotations).sort(byName)) put(line, key, value)
  }
  if (List.isCons(options.spans)) {
    const now = options.date.getTime()
    const spans: Record<string, number> = {}
    for (const span of options.spans) spans[span.label] = now - span.startTime
    line.spans = spans
  }
  if (!Cause.isEmpty(options.cause)) line.cause = Cause.pretty(options.cause)
  return line
}

/** One JSON object per line. */
export const jsonLineLogger: Logger.Logger<unknown, string> = Logger.make((options) =>
  JSON.stringify(fieldsOf(options))
)

const PLAIN = /^[^\s"=]+$/

const prettyValue = (value: unknown): string => {
  const text = typeof value === "string" ? value : textOf(value)
  return PLAIN.test(text) ? text : JSON.stringify(text)
}

/**
 * `2026-11-25T01:02:03.456Z INFO request method=GET route=/v1/payments/:paymentId status=200 …`;
 * a cause follows on its own lines, indented.
 */
export const prettyLineLogger: Logger.Logger<unknown, string> = Logger.make((options) => {
  const { time, level, message, cause, spans, ...rest } = fieldsOf(options)
  let line = `${time} ${String(level).toUpperCase().padEnd(7)} ${message}`
  for (const [key, value] of Object.entries(rest)) line += ` ${key}=${prettyValue(value)}`
  if (spans !== undefined) {
    for (const [label, ms] of Object.entries(spans as Record<string, number>)) {
      line += ` ${label}=${ms}ms`
    }
  }
  if (typeof cause === "string") line += `\n  ${cause.split("\n").join("\n  ")}`
  return line
})

/** Effect's own console: the one a fiber has unless something (a test) swapped it. */
const defaultConsole = Effect.runSync(Console.consoleWith(Effect.succeed))

/** stdout's own write where there is one (Node, Bun), else none. */
const stdoutWrite: ((text: string) => unknown) | undefined = (() => {
  const stdout = (globalThis as { process?: { stdout?: { write?: (text: string) => unknown } } })
    .process?.stdout
  return typeof stdout?.write === "function" ? stdout.write.bind(stdout) : undefined
})()

/**
 * The logger of a format, writing each line to the `Console` of the fiber that logs; with
 * Effect's default console, straight to stdout: `console.log` formats its arguments first,
 * about 2 µs a line for nothing on a line that is already text.
 */
export const lineLogger = (format: LogFormat): Logger.Logger<unknown, void> => {
  const format_ = format === "pretty" ? prettyLineLogger : jsonLineLogger
  return Logger.make((options) => {
    const console = Context.get(
      FiberRefs.getOrDefault(options.context, DefaultServices.currentServices),
      Console.Console
    )
    const line = format_.log(options)
    if (console === defaultConsole && stdoutWrite !== undefined) stdoutWrite(`${line}\n`)
    else console.unsafe.log(line)
  })
}

/**
 * `effect` with the engine's logging: its logger in place of the ones it had
 * (Effect's tracer logger, which adds lines to spans, stays), and its level.
 * Fibers forked inside keep both, as does a runtime taken inside (the request
 * handler's). `false` leaves the current logger and level alone: an embedder's own.
 */
export const withEngineLogging =
  (settings: LoggingSettings | false | undefined) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    if (settings === false) return effect
    const logger = lineLogger(settings?.format ?? DEFAULT_LOG_FORMAT)
    return effect.pipe(
      Effect.locallyWith(FiberRef.currentLoggers, (loggers) =>
        HashSet.has(loggers, Logger.tracerLogger)
          ? HashSet.make(logger, Logger.tracerLogger)
          : HashSet.make(logger)
      ),
      Effect.locally(
        FiberRef.currentMinimumLogLevel,
        logLevelOf(settings?.level ?? DEFAULT_LOG_LEVEL)
      )
    )
  }

const round = (ms: number) => Math.round(ms * 100) / 100

/**
 * The request line, one per answered request: `request` at `info` with method,
 * route (the template), status, durationMs, requestId and the caller's id; a
 * 500 at `error` with its cause. A 4xx stays at `info`: it is the client's
 * mistake, answered as documented, not the engine's to alarm anyone about
 * (metrics count them by status). Written synchronously to the loggers of
 * `fiberRefs` (the handler's runtime), at their level: no fiber per request.
 */
export const requestLogObserver = (fiberRefs: FiberRefs.FiberRefs): RequestObserver => {
  const loggers = FiberRefs.getOrDefault(fiberRefs, FiberRef.currentLoggers)
  const minimum = FiberRefs.getOrDefault(fiberRefs, FiberRef.currentMinimumLogLevel)
  const base = FiberRefs.getOrDefault(fiberRefs, FiberRef.currentLogAnnotations)
  const noSpans = List.empty()
  return (outcome) => {
    const logLevel = outcome.status >= 500 ? LogLevel.Error : LogLevel.Info
    if (LogLevel.greaterThan(minimum, logLevel)) return
    const caller = outcome.caller
    const fields: Record<string, unknown> = {
      method: outcome.method,
      route: outcome.route ?? null,
      status: outcome.status,
      durationMs: round(outcome.durationMs),
      requestId: outcome.requestId
    }
    if (caller?.partnerId !== undefined) fields.partnerId = caller.partnerId
    if (caller?.walletAppId !== undefined) fields.walletAppId = caller.walletAppId
    const options: Logger.Logger.Options<unknown> = {
      fiberId: FiberId.none,
      logLevel,
      message: ["request", fields],
      cause: outcome.cause ?? Cause.empty,
      context: fiberRefs,
      spans: noSpans,
      annotations: base,
      date: new Date()
    }
    for (const logger of loggers) logger.log(options)
  }
}
