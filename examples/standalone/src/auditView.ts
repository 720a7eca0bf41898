/**
 * `pay audit`'s output: the audit trail's entries as JSON for scripts, or as
 * a few lines each for people (what changed, old and new values side by side).
 */
import { type AuditEntry, actorLabel } from "@pay/core"

/** An entry as `pay audit --json` prints it. */
export const auditJson = (e: AuditEntry) => ({
  id: e.id,
  at: e.at.toISOString(),
  partnerId: e.partnerId,
  actor: e.actor,
  action: e.action,
  subject: e.subject,
  merchantId: e.merchantId,
  before: e.before,
  after: e.after
})

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const shown = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value))

/** What changed, one line a field: `field: value`, or `field: old -> new` when it changed. */
const changeLines = (before: unknown, after: unknown): Array<string> => {
  if ((before === null || isRecord(before)) && (after === null || isRecord(after))) {
    const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])]
    return fields.map((field) => {
      const [was, is] = [before?.[field], after?.[field]]
      if (before === null) return `${field}: ${shown(is)}`
      if (after === null) return `${field}: ${shown(was)}`
      return JSON.stringify(was) === JSON.stringify(is)
        ? `${field}: ${shown(is)}`
        : `${field}: ${shown(was)} -> ${shown(is)}`
    })
  }
  return [`before: ${JSON.stringify(before)}`, `after: ${JSON.stringify(after)}`]
}

/** An entry for people: its time, action and subject, then who, then what changed. */
export const auditText = (e: AuditEntry): string =>
  [
    `${e.at.toISOString()}  ${e.action}  ${e.subject}`,
    `    partner ${e.partnerId}${e.merchantId === null ? "" : `, merchant ${e.merchantId}`}, by ${actorLabel(e.actor)}`,
    ...changeLines(e.before, e.after).map((line) => `    ${line}`)
  ].join("\n")
