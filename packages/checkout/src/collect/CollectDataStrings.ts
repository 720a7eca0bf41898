/**
 * Every word the data-collection page shows, in one place: English (the
 * schema's own titles and the checks' own messages), and Spanish for a web
 * view whose `Accept-Language` prefers it, as the checkout page does. The
 * schema sent to wallets stays as it is; only the page translates it.
 */
import { type CollectDataSchema, type Language, PLACE_REQUIRED } from "@pay/core"

export interface CollectDataStrings {
  readonly title: string
  readonly intro: string
  readonly required: string
  readonly submit: string
  readonly problems: (count: number) => string
  readonly fillOneOf: string
  readonly or: string
  readonly option: (n: number) => string
  readonly thankYou: string
  readonly received: string
  readonly receivedTitle: string
  readonly cannotUse: string
  readonly forbidden: string
  readonly noPayment: string
  readonly expired: string
  readonly notPayable: string
  readonly noAccounts: string
  /** The fields' titles and descriptions, by property id; the schema's own where absent. */
  readonly fields: Readonly<
    Record<string, { readonly title: string; readonly description: string }>
  >
  /** A check's message in this language; the English one where none is known. */
  readonly message: (english: string) => string
}

const en: CollectDataStrings = {
  title: "Your details",
  intro: "The merchant needs a few details about you to complete this payment.",
  required: "(required)",
  submit: "Continue",
  problems: (count) =>
    count === 1 ? "There is a problem to fix" : `There are ${count} problems to fix`,
  fillOneOf: "Fill in at least one of these in full:",
  or: "or",
  option: (n) => `Option ${n}`,
  thankYou: "Thank you",
  received: "Your details were received. Return to your wallet to finish the payment.",
  receivedTitle: "received",
  cannotUse: "This link cannot be used",
  forbidden: "This link is not valid for this payment: open the one your wallet received.",
  noPayment: "No such payment.",
  expired: "This payment has expired.",
  notPayable: "This payment can no longer be paid.",
  noAccounts: "The link names no valid account (accounts=…).",
  fields: {},
  message: (english) => english
}

// The checks' messages (CollectData.ts), each with its Spanish; `{n}` is a number kept as sent.
const SPANISH_MESSAGES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^is required$/, "es obligatorio"],
  [/^is not a known field$/, "no es un campo conocido"],
  [/^must be accepted$/, "debe aceptarse"],
  [/^must not be empty$/, "no puede estar vacío"],
  [/^must be at least (\d+) characters long$/, "debe tener al menos {n} caracteres"],
  [/^must be at most (\d+) characters long$/, "debe tener como máximo {n} caracteres"],
  [/^must be a date as YYYY-MM-DD$/, "debe ser una fecha AAAA-MM-DD"],
  [
    /^must be two capital letters \(ISO 3166-1 alpha-2\)$/,
    "deben ser dos letras mayúsculas (ISO 3166-1 alfa-2)"
  ],
  [/^is not in the expected format$/, "no tiene el formato esperado"],
  [/^is not valid$/, "no es válido"],
  [/^was given more than once$/, "se envió más de una vez"],
  [/^must be "true" or "false"$/, 'debe ser "true" o "false"'],
  [
    new RegExp(`^${PLACE_REQUIRED.replace(/[()]/g, "\\$&")}$`),
    "se necesita el lugar de nacimiento (país y dirección) o el de residencia (país y dirección)"
  ]
]

const es: CollectDataStrings = {
  title: "Tus datos",
  intro: "El comercio necesita algunos datos tuyos para completar este pago.",
  required: "(obligatorio)",
  submit: "Continuar",
  problems: (count) =>
    count === 1 ? "Hay un problema que corregir" : `Hay ${count} problemas que corregir`,
  fillOneOf: "Completa al menos uno de estos grupos:",
  or: "o",
  option: (n) => `Opción ${n}`,
  thankYou: "Gracias",
  received: "Recibimos tus datos. Vuelve a tu billetera para terminar el pago.",
  receivedTitle: "recibidos",
  cannotUse: "Este enlace no se puede usar",
  forbidden: "Este enlace no es válido para este pago: abre el que recibió tu billetera.",
  noPayment: "No existe ese pago.",
  expired: "Este pago caducó.",
  notPayable: "Este pago ya no se puede pagar.",
  noAccounts: "El enlace no indica ninguna cuenta válida (accounts=…).",
  fields: {
    fullName: { title: "Nombre completo", description: "Tu nombre legal completo" },
    dob: { title: "Fecha de nacimiento", description: "En formato AAAA-MM-DD" },
    pobCountry: {
      title: "Lugar de nacimiento: país",
      description: "Código del país (ISO 3166-1 alfa-2, p. ej. ES)"
    },
    pobAddress: {
      title: "Lugar de nacimiento: ciudad",
      description: "Ciudad y provincia o estado (p. ej. 'Sevilla, Andalucía')"
    },
    porCountry: {
      title: "Lugar de residencia: país",
      description: "Código del país (ISO 3166-1 alfa-2, p. ej. MX)"
    },
    porAddress: {
      title: "Lugar de residencia: dirección",
      description: "Calle y número, ciudad y provincia o estado"
    },
    tosConfirmed: {
      title: "Aceptación de las condiciones del servicio",
      description: "Márcala para aceptar las condiciones del servicio"
    }
  },
  message: (english) => {
    for (const [pattern, spanish] of SPANISH_MESSAGES) {
      const match = pattern.exec(english)
      if (match !== null) return spanish.replace("{n}", match[1] ?? "")
    }
    return english
  }
}

export const COLLECT_STRINGS: Readonly<Record<Language, CollectDataStrings>> = { en, es }

/** The schema with its titles and descriptions in the page's language. */
export const localizedSchema = (
  schema: CollectDataSchema,
  strings: CollectDataStrings
): CollectDataSchema => ({
  ...schema,
  properties: Object.fromEntries(
    Object.entries(schema.properties).map(([id, property]) => [
      id,
      { ...property, ...strings.fields[id] }
    ])
  )
})
