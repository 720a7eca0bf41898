/**
 * Every word the buyer's checkout page shows, in one place: English, and
 * Spanish for a browser that prefers it (`Accept-Language`). The page's script
 * takes the words it needs at run time from the page itself (data attributes),
 * so this is the only copy. A new language is one more entry of `STRINGS`.
 */
import {
  type FailureCode,
  type Language,
  NO_OPTIONS_EN,
  type NoOptionsCode,
  type NoOptionsWords
} from "@pay/core"

export { LANGUAGES, type Language, languageOf } from "@pay/core"

export interface CheckoutStrings {
  readonly title: string
  readonly pay: string
  readonly reference: string
  readonly scanWithWallet: string
  readonly qrLabel: string
  readonly openInWallet: string
  readonly copyLink: string
  readonly linkCopied: string
  readonly paymentLink: string
  readonly expiresIn: string
  readonly expiresAt: string
  readonly testMode: string
  readonly payWithBrowserWallet: string
  readonly connectWallet: string
  /** `{address}` is replaced with the connected account, shortened. */
  readonly connectedAs: string
  readonly chooseOption: string
  /** `{amount}` is replaced with what the buyer pays: one or more `onNetwork`, joined with "or". */
  readonly youPay: string
  /** `{token}` (an amount, or a symbol) and `{network}` are replaced: "4.50 USDC on Base". */
  readonly onNetwork: string
  /** The heading over why a payment offers no way to pay. */
  readonly noWayToPay: string
  /** Why no way to pay is offered, by the gateway's code (gateway/NoOptions.ts says which words go in). */
  readonly noOptions: Readonly<Record<NoOptionsCode, string>>
  readonly signAndPay: string
  /** The pay button's words for an option the wallet pays by sending a transaction (a native coin). */
  readonly sendAndPay: string
  readonly noWallet: string
  readonly walletRejected: string
  readonly quoteRefreshed: string
  /**
   * Shown while the wallet is asked to approve the token for Permit2 (a
   * transaction, once per token) before it signs; `{step}` and `{steps}` are
   * replaced ("1", "2").
   */
  readonly approveInWallet: string
  /** Shown while the wallet is asked to sign, after an approval. */
  readonly signInWallet: string
  /**
   * Shown while the wallet is asked to send the payment itself (a native
   * coin's transfer: one step, nothing signed); `{amount}` is replaced
   * ("0.0035 ETH").
   */
  readonly sendInWallet: string
  /** `{amount}` is replaced with what the account needs. */
  readonly insufficientBalance: string
  readonly somethingWrong: string
  readonly returnToShop: string
  readonly redirecting: string
  readonly transaction: string
  readonly notFoundTitle: string
  readonly notFound: string
  readonly status: Readonly<
    Record<CheckoutState, { readonly heading: string; readonly text: string }>
  >
  readonly failure: Readonly<Record<FailureCode, string>>
}

/** The states the page shows: the payment's statuses. */
export type CheckoutState =
  | "requires_action"
  | "processing"
  | "succeeded"
  | "failed"
  | "expired"
  | "cancelled"

const en: CheckoutStrings = {
  title: "Pay",
  pay: "Pay",
  reference: "Reference",
  scanWithWallet: "Scan with your phone's wallet, or open the link in a wallet on this device.",
  qrLabel: "QR code of the payment link",
  openInWallet: "Open in wallet",
  copyLink: "Copy link",
  linkCopied: "Link copied",
  paymentLink: "Payment link",
  expiresIn: "Expires in",
  expiresAt: "This payment expires at",
  testMode: "Test payment: no real money moves.",
  payWithBrowserWallet: "Pay from a browser wallet",
  connectWallet: "Connect wallet",
  connectedAs: "Connected: {address}",
  chooseOption: "Choose how to pay",
  youPay: "You pay {amount}",
  onNetwork: NO_OPTIONS_EN.asset,
  noWayToPay: "No way to pay",
  noOptions: NO_OPTIONS_EN.reasons,
  signAndPay: "Sign and pay",
  sendAndPay: "Pay from wallet",
  noWallet: "No browser wallet was found. Scan the code with your phone instead.",
  walletRejected: "The wallet did not sign. Nothing was paid.",
  quoteRefreshed: "The price was updated. Check the amount and sign again.",
  approveInWallet:
    "Step {step} of {steps}: approve the token in your wallet. This is needed once per token, and pays a small network fee.",
  signInWallet: "Last step: sign the payment in your wallet.",
  sendInWallet:
    "Confirm the payment in your wallet: it sends {amount} and pays a small network fee.",
  insufficientBalance: "This account does not hold enough: {amount} is needed.",
  somethingWrong: "Something went wrong. Try again.",
  returnToShop: "Return to the shop",
  redirecting: "Taking you back to the shop…",
  transaction: "Transaction",
  notFoundTitle: "Payment not found",
  notFound: "There is no payment at this link. Check the link you were given.",
  status: {
    requires_action: { heading: "Waiting for payment", text: "Pay with your wallet." },
    processing: {
      heading: "Payment on its way",
      text: "The transaction was sent and is being confirmed."
    },
    succeeded: { heading: "Payment received", text: "Thank you. The payment is complete." },
    failed: { heading: "Payment failed", text: "The payment did not go through." },
    expired: { heading: "Payment expired", text: "The time to pay has run out." },
    cancelled: { heading: "Payment cancelled", text: "This payment was cancelled." }
  },
  failure: {
    declined_user: "The payment was declined in the wallet.",
    transaction_reverted: "The network rejected the transaction.",
    transaction_dropped: "The transaction never reached the network.",
    authorization_expired: "The signed authorization expired before it could be used.",
    chain_reset:
      "The test network was restarted before the payment went through. Nothing was taken.",
    account_deployment_failed:
      "Your wallet's account could not be set up on the network. Nothing was taken.",
    signature_rejected:
      "Your wallet's account no longer accepts this signature. Nothing was taken.",
    approval_failed: "Your wallet's approval of the token did not go through. Nothing was taken.",
    transaction_mismatch:
      "The transfer your wallet sent is not the one this payment asked for. The merchant can return what arrived."
  }
}

const es: CheckoutStrings = {
  title: "Pagar",
  pay: "Pagar",
  reference: "Referencia",
  scanWithWallet:
    "Escanea con la billetera de tu teléfono o abre el enlace en una billetera de este dispositivo.",
  qrLabel: "Código QR del enlace de pago",
  openInWallet: "Abrir en la billetera",
  copyLink: "Copiar enlace",
  linkCopied: "Enlace copiado",
  paymentLink: "Enlace de pago",
  expiresIn: "Caduca en",
  expiresAt: "Este pago caduca a las",
  testMode: "Pago de prueba: no se mueve dinero real.",
  payWithBrowserWallet: "Pagar con una billetera del navegador",
  connectWallet: "Conectar billetera",
  connectedAs: "Conectada: {address}",
  chooseOption: "Elige cómo pagar",
  youPay: "Pagas {amount}",
  onNetwork: "{token} en {network}",
  noWayToPay: "No hay forma de pagar",
  noOptions: {
    no_settlement:
      "Este comercio aún no ha configurado cómo recibe pagos en cripto, así que todavía no hay forma de pagarle.",
    settlement_not_payable:
      "Este comercio solo recibe pagos en {assets}, que este servicio de pagos no admite, así que aquí no hay forma de pagarle.",
    no_price:
      "No hay tipo de cambio de {currency} a {assets}, lo que recibe este comercio, así que no se puede convertir el importe.",
    asset_not_payable:
      "El pago pide {asked}, que este comercio no puede recibir aquí; recibe {assets}.",
    accounts_not_payable:
      "Ninguna de las cuentas de la billetera está en una red en la que se pueda hacer este pago: se puede pagar en {assets}.",
    network_unavailable: "La red no respondió ({networks}). Inténtalo de nuevo en un momento."
  },
  signAndPay: "Firmar y pagar",
  sendAndPay: "Pagar desde la billetera",
  noWallet: "No se encontró ninguna billetera en el navegador. Escanea el código con tu teléfono.",
  walletRejected: "La billetera no firmó. No se pagó nada.",
  quoteRefreshed: "El precio se actualizó. Revisa el importe y vuelve a firmar.",
  approveInWallet:
    "Paso {step} de {steps}: aprueba el token en tu billetera. Se hace una vez por token y cuesta una pequeña tarifa de red.",
  signInWallet: "Último paso: firma el pago en tu billetera.",
  sendInWallet:
    "Confirma el pago en tu billetera: envía {amount} y cuesta una pequeña tarifa de red.",
  insufficientBalance: "Esta cuenta no tiene saldo suficiente: se necesitan {amount}.",
  somethingWrong: "Algo salió mal. Inténtalo de nuevo.",
  returnToShop: "Volver a la tienda",
  redirecting: "Volviendo a la tienda…",
  transaction: "Transacción",
  notFoundTitle: "Pago no encontrado",
  notFound: "No hay ningún pago en este enlace. Revisa el enlace que recibiste.",
  status: {
    requires_action: { heading: "Esperando el pago", text: "Paga con tu billetera." },
    processing: {
      heading: "Pago en camino",
      text: "La transacción se envió y se está confirmando."
    },
    succeeded: { heading: "Pago recibido", text: "Gracias. El pago se completó." },
    failed: { heading: "El pago falló", text: "El pago no se realizó." },
    expired: { heading: "Pago caducado", text: "Se acabó el tiempo para pagar." },
    cancelled: { heading: "Pago cancelado", text: "Este pago se canceló." }
  },
  failure: {
    declined_user: "El pago se rechazó en la billetera.",
    transaction_reverted: "La red rechazó la transacción.",
    transaction_dropped: "La transacción nunca llegó a la red.",
    authorization_expired: "La autorización firmada caducó antes de poder usarse.",
    chain_reset: "La red de pruebas se reinició antes de completar el pago. No se cobró nada.",
    account_deployment_failed:
      "No se pudo crear la cuenta de su billetera en la red. No se cobró nada.",
    signature_rejected: "La cuenta de su billetera ya no acepta esta firma. No se cobró nada.",
    approval_failed: "La aprobación del token en su billetera no se completó. No se cobró nada.",
    transaction_mismatch:
      "La transferencia que envió su billetera no es la que pedía este pago. El comercio puede devolver lo recibido."
  }
}

export const STRINGS: Readonly<Record<Language, CheckoutStrings>> = { en, es }

/** The page's words for why there is no way to pay, as gateway/NoOptions.ts takes them. */
export const noOptionsWords = (language: Language): NoOptionsWords => ({
  language,
  asset: STRINGS[language].onNetwork,
  reasons: STRINGS[language].noOptions
})
