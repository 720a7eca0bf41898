/**
 * What a start that fails says: one line per problem, naming the setting (the
 * variable, or the place in PAY_CONFIG's file), what is wrong and what is
 * allowed, without a stack trace or Effect's own error tree (an operator reads
 * it, and `--verbose` or PAY_LOG_LEVEL=debug adds the whole cause). The
 * problems a start meets: a wrong variable (a ConfigError), a database that
 * cannot be opened, an address that cannot be listened on, a refusal of the
 * server's own (StartRefused).
 */
import { Cause, ConfigError, Option } from "effect"
import { describeDatabase, SECRET_SETTINGS, SETTINGS, StartRefused } from "./config.js"

/** The value of a setting as a message may repeat it: quoted and short, never a secret's. */
const shownValue = (name: string, env: NodeJS.ProcessEnv): string | undefined => {
  const value = env[name]
  if (value === undefined || SECRET_SETTINGS.has(name)) return undefined
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)
}

/** Every failure of a ConfigError, each with its path and message (an And/Or tree flattened). */
const leaves = (
  error: ConfigError.ConfigError
): Array<{ readonly path: ReadonlyArray<string>; readonly message: string }> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...leaves(error.left), ...leaves(error.right)]
    default:
      return [{ path: error.path, message: error.message }]
  }
}

/**
 * One line for a wrong variable: `PAY_MAX_BODY_BYTES is "-1"; it must be from
 * 1024 to 104857600`. Our validations' messages start with the variable's
 * name (their path is blank); Effect's own parse failures (`Expected an
 * integer value but received abc`) carry the path and get what is allowed
 * from SETTINGS.
 */
export const configErrorLines = (
  error: ConfigError.ConfigError,
  env: NodeJS.ProcessEnv = process.env
): ReadonlyArray<string> => {
  const lines = leaves(error).map(({ path, message }) => {
    const named = /^([A-Z][A-Z0-9_]*)\b/.exec(message)?.[1]
    // The environment is flat: the variable is the path's last part (a mapped Config repeats it).
    const name = path.length > 0 ? path[path.length - 1] : named
    if (name === undefined) return message
    const value = shownValue(name, env)
    if (named === name) {
      const rest = message.slice(name.length).trim()
      return value !== undefined && /^must\b/.test(rest)
        ? `${name} is ${value}; it ${rest}`
        : message
    }
    const allowed = SETTINGS[name]
    const wrong = value === undefined ? "is not valid" : `is ${value}`
    return allowed === undefined
      ? `${name} ${wrong}: ${message}`
      : `${name} ${wrong}; it must be ${allowed}`
  })
  // Several validations of one variable may each fail: said once.
  return [...new Set(lines)]
}

/** The first error in a chain of causes with a string `code` (ECONNREFUSED, 28P01, ...). */
const withCode = (error: unknown): { code: string; message: string } | undefined => {
  for (let e: unknown = error, depth = 0; e instanceof Object && depth < 8; depth++) {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown }
    if (typeof code === "string") return { code, message: String(message ?? "") }
    e = cause
  }
  return undefined
}

/** The innermost message in a chain of causes. */
const innermost = (error: unknown): string => {
  let message = error instanceof Error ? error.message : String(error)
  for (let e: unknown = error, depth = 0; e instanceof Object && depth < 8; depth++) {
    if (e instanceof Error && e.message !== "") message = e.message
    e = (e as { cause?: unknown }).cause
  }
  return message
}

/** Why PostgreSQL refused, in words, from the driver's error. */
const postgresReason = (error: unknown, url: URL): string => {
  const found = withCode(error)
  const at = `${url.hostname}:${url.port || "5432"}`
  switch (found?.code) {
    case "ECONNREFUSED":
      return `connection refused at ${at} (ECONNREFUSED); check that PostgreSQL runs there and the URL's host and port`
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `host ${url.hostname} not found (${found.code}); check the URL's host`
    case "ETIMEDOUT":
      return `no answer from ${at} (ETIMEDOUT); check the URL's host and port, and the firewall`
    case "28P01":
      return "password authentication failed; check the URL's user and password"
    case "28000":
      return `${found.message}; check the URL's user`
    case "3D000":
      return `${found.message}; create it (createdb) or name an existing one in the URL`
    case "42501":
      return `${found.message}; the URL's user needs the right to create tables in its schema`
    default: {
      const message = innermost(error)
      return /timed out/i.test(message)
        ? `no answer from ${at} in time; check the URL's host and port, and the firewall`
        : `${message}; check the URL`
    }
  }
}

/** Why a SQLite file could not be opened, in words. */
const sqliteReason = (error: unknown, filename: string): string => {
  const found = withCode(error)
  switch (found?.code) {
    case "EEXIST":
    case "ENOTDIR":
      return "its folder cannot be made: a file is in the way; give a path in a folder"
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "permission denied; give a path the server's user may write, or change the folder's permissions"
    case "SQLITE_CANTOPEN":
      return "the file cannot be opened; give a path the server's user may write"
    case "SQLITE_NOTADB":
      return "the file is not a SQLite database; give another path"
    default:
      return `${innermost(error).replace(`SQLite database ${filename}: `, "")}`
  }
}

/** One line for a database that could not be opened, or undefined when the error is not one. */
export const databaseProblem = (error: unknown, database: string): string | undefined => {
  const tag = (error as { _tag?: unknown } | null)?._tag
  if (tag !== "SqliteStorageError" && tag !== "SqlError" && tag !== "MigrationError") {
    return undefined
  }
  const shown = describeDatabase(database)
  return URL.canParse(database) && /^postgres(ql)?:$/i.test(new URL(database).protocol)
    ? `PAY_DATABASE ${shown}: ${postgresReason(error, new URL(database))}`
    : `PAY_DATABASE ${shown}: ${sqliteReason(error, database)}`
}

/** One line for an address the server cannot listen on, or undefined when the error is not one. */
export const listenProblem = (error: unknown, host: string, port: number): string | undefined => {
  const found = withCode(error)
  const message = error instanceof Error ? error.message : String(error)
  const address = `HOST:PORT ${host.includes(":") ? `[${host}]` : host}:${port}`
  if (found?.code === "EADDRINUSE" || /\bin use\b/i.test(message)) {
    return `${address} is in use by another process (EADDRINUSE); stop it, or set PORT to a free port (0 picks one)`
  }
  if (found?.code === "EACCES") {
    return `${address} needs privileges (EACCES); ports below 1024 need them: set PORT from 1024 up`
  }
  if (found?.code === "EADDRNOTAVAIL" || found?.code === "ENOTFOUND") {
    return `${address}: HOST is not an address of this machine (${found.code}); give one of its addresses, 127.0.0.1 or 0.0.0.0`
  }
  return undefined
}

/** Where a failed start was: the settings its lines name. */
export interface StartContext {
  readonly host?: string
  readonly port?: number
  readonly database?: string
  readonly env?: NodeJS.ProcessEnv
}

/**
 * The lines a failed start prints, each prefixed `error: `. Undefined when
 * the failure was an interrupt only (a signal during the start).
 */
export const startErrorLines = (
  cause: Cause.Cause<unknown>,
  context: StartContext = {}
): ReadonlyArray<string> | undefined => {
  if (Cause.isInterruptedOnly(cause)) return undefined
  const env = context.env ?? process.env
  const failures = [...Cause.failures(cause), ...Cause.defects(cause)]
  const lines = failures.flatMap((error): ReadonlyArray<string> => {
    if (ConfigError.isConfigError(error)) return configErrorLines(error, env)
    if (error instanceof StartRefused) return [error.message]
    const database =
      context.database === undefined ? undefined : databaseProblem(error, context.database)
    if (database !== undefined) return [database]
    const listen =
      context.host === undefined || context.port === undefined
        ? undefined
        : listenProblem(error, context.host, context.port)
    if (listen !== undefined) return [listen]
    const message = Option.getOrElse(
      Option.liftPredicate(innermost(error), (m) => m !== ""),
      () => String(error)
    )
    return [`the server could not start: ${message} (--verbose shows the whole cause)`]
  })
  return [...new Set(lines)].map((line) => `error: ${line}`)
}
