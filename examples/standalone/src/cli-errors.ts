/**
 * How the CLI refuses: one line on stderr (`error: …`), or with `--json` one
 * JSON object, `{"error": {"code", "message"}}`; exit code 1 either way. The
 * codes are for scripts to branch on, so they are few and stable
 * (docs/cli.md lists them).
 */
import { HelpDoc, ValidationError } from "@effect/cli"
import { stripAnsi } from "./cli-output.js"

export type CliErrorCode =
  /** The command line itself: an unknown command or option, a missing one, a value not among the choices. */
  | "usage"
  /** A value the command refuses (a malformed id, a number out of range), or a wrong PAY_SECRET. */
  | "invalid_input"
  /** The partner, merchant, payment, wallet app or key named does not exist. */
  | "not_found"
  /** The command could not do it in the current state (a revoked key, nothing to settle, values left unsealed). */
  | "refused"
  /** No SQLite file at the path given: the CLI never creates one by accident. */
  | "database_missing"
  /** The database could not be opened, migrated or read. */
  | "database_error"
  /** A bug: anything else. */
  | "internal"

/** A refusal with its code; its message is one line for people. */
export class CliError extends Error {
  constructor(
    readonly code: CliErrorCode,
    message: string
  ) {
    super(message)
  }
}

export const invalidInput = (message: string) => new CliError("invalid_input", message)
export const notFound = (message: string) => new CliError("not_found", message)
export const refused = (message: string) => new CliError("refused", message)

/** The code of any failure: ours carry one; the parser's and the stores' are recognised. */
export const errorCode = (error: unknown): CliErrorCode => {
  if (error instanceof CliError) return error.code
  if (ValidationError.isValidationError(error)) return "usage"
  const tag = (error as { _tag?: unknown } | null)?._tag
  if (typeof tag === "string" && /Storage|Sql|Postgres|Migration/.test(tag)) {
    return "database_error"
  }
  return error instanceof Error ? "refused" : "internal"
}

/** A failure's message as one line: the parser's help text made plain. */
export const errorMessage = (error: unknown): string => {
  if (ValidationError.isValidationError(error)) {
    return stripAnsi(HelpDoc.toAnsiText(error.error))
      .trim()
      .replace(/\s*\n\s*/g, " ")
  }
  if (error instanceof Error) return error.message
  return String(error)
}

/** What `--json` prints on stderr for a failure; with the database when it matters to the answer. */
export const errorJson = (error: unknown, database?: string): string =>
  JSON.stringify({
    error: {
      code: errorCode(error),
      message: errorMessage(error),
      ...(database === undefined ? {} : { database })
    }
  })
