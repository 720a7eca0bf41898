/**
 * The checkout page's static parts: its styles (inline, allowed by their hash)
 * and its script (a file of its own, `checkout.js`, pinned by an integrity
 * hash and versioned by it, so a browser never runs a stale copy). The look is
 * the data-collection page's: the same colours, type and sizes, light and dark.
 */
import { Encoding } from "effect"
import { sha256, stringToBytes } from "viem"
import { CHECKOUT_STATUS_SCRIPT } from "./CheckoutScript.js"

const base64Sha256 = (text: string) => Encoding.encodeBase64(sha256(stringToBytes(text), "bytes"))

/** The script file's text. */
export const CHECKOUT_SCRIPT = CHECKOUT_STATUS_SCRIPT

/** The script's Subresource Integrity value. */
export const CHECKOUT_SCRIPT_INTEGRITY = `sha256-${base64Sha256(CHECKOUT_SCRIPT)}`

/** The script's URL relative to a payment's page (`{publicUrl}/pay_…` loads `{publicUrl}/checkout.js`). */
export const CHECKOUT_SCRIPT_PATH = `checkout.js?v=${Encoding.encodeHex(sha256(stringToBytes(CHECKOUT_SCRIPT), "bytes")).slice(0, 12)}`

export const CSS = `
:root{color-scheme:light;--bg:#fff;--card:#fff;--fg:#1f2328;--muted:#59636e;--border:#d1d9e0;--field:#f6f8fa;--accent:#0969da;--accent-fg:#fff;--error:#cf222e;--error-bg:#ffebe9;--ok:#1a7f37;--ok-bg:#dafbe1;--warn:#9a6700;--warn-bg:#fff8c5}
@media (prefers-color-scheme:dark){:root{color-scheme:dark;--bg:#0d1117;--card:#151b23;--fg:#e6edf3;--muted:#9198a1;--border:#3d444d;--field:#0d1117;--accent:#4493f8;--accent-fg:#0d1117;--error:#ff7b72;--error-bg:#2d1214;--ok:#3fb950;--ok-bg:#12261e;--warn:#d29922;--warn-bg:#272115}}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;-webkit-text-size-adjust:100%}
main{max-width:28rem;margin:0 auto;padding:1.25rem 1rem 3rem}
.merchant{display:flex;gap:.875rem;align-items:center;margin:0 0 1rem}
.logo{width:3.5rem;height:3.5rem;border-radius:.875rem;border:1px solid var(--border);object-fit:cover;flex:none;background:var(--field)}
.logo-letter{display:flex;align-items:center;justify-content:center;font-size:1.5rem;font-weight:700;color:var(--muted)}
h1{font-size:1.25rem;line-height:1.3;margin:0;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:0 0 .25rem}
.reference{margin:0;color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
.amount{font-size:2.25rem;font-weight:700;margin:.25rem 0 0;letter-spacing:-.01em}
.token-amount{margin:.25rem 0 0;color:var(--muted);font-weight:600}
.no-options{margin:1rem 0;padding:.875rem 1rem;border-radius:.875rem;border:1px solid var(--warn);background:var(--warn-bg)}
.no-options p{margin:0}
.test-mode{display:inline-block;margin:.5rem 0 0;padding:.15rem .6rem;border-radius:1rem;background:var(--warn-bg);color:var(--warn);font-size:.85rem;font-weight:600}
.status{margin:1rem 0;padding:.875rem 1rem;border-radius:.875rem;border:1px solid var(--border);background:var(--card)}
.status p{margin:0}
.status .reason,.status .tx{margin-top:.5rem}
#status-return{margin-top:.875rem}
.status-succeeded{border-color:var(--ok);background:var(--ok-bg)}
.status-succeeded h2{color:var(--ok)}
.status-failed,.status-expired,.status-cancelled{border-color:var(--error);background:var(--error-bg)}
.status-failed h2,.status-expired h2,.status-cancelled h2{color:var(--error)}
code{font:.85rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.scan{margin:1rem 0 .75rem;color:var(--muted)}
.qr{background:#fff;border-radius:1rem;padding:.75rem;width:min(100%,18rem);margin:0 auto;border:1px solid var(--border)}
.qr svg{display:block;width:100%;height:auto}
.actions{display:grid;grid-template-columns:1fr 1fr;gap:.75rem;margin:1rem 0}
.actions .button:only-child{grid-column:1/-1}
.button{display:flex;align-items:center;justify-content:center;min-height:3rem;padding:.5rem 1rem;font:inherit;font-weight:600;text-align:center;text-decoration:none;color:var(--fg);background:var(--field);border:1px solid var(--border);border-radius:.75rem;cursor:pointer}
.button.primary{color:var(--accent-fg);background:var(--accent);border-color:var(--accent)}
.button[disabled]{opacity:.6;cursor:progress}
a:focus,button:focus,input:focus{outline:3px solid var(--accent);outline-offset:2px}
.link-label{display:block;font-weight:600;font-size:.9rem;margin:0 0 .25rem}
.link{display:block;width:100%;min-height:2.75rem;padding:.5rem .75rem;font:.85rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:inherit;background:var(--field);border:1px solid var(--border);border-radius:.75rem}
.countdown{margin:1rem 0 0;color:var(--muted)}
.countdown time{font-variant-numeric:tabular-nums;font-weight:600;color:var(--fg)}
.countdown.urgent{position:sticky;bottom:.5rem;padding:.6rem .9rem;border-radius:.75rem;background:var(--error-bg);color:var(--error);font-size:1.15rem;font-weight:700}
.countdown.urgent time{color:var(--error)}
.wallet{margin:1.5rem 0 0;padding:1rem 0 0;border-top:1px solid var(--border)}
.providers{display:grid;gap:.5rem;margin:.5rem 0}
.providers img{width:1.5rem;height:1.5rem;margin-right:.5rem}
fieldset{border:1px solid var(--border);border-radius:.75rem;margin:.75rem 0;padding:.5rem .875rem}
legend{font-weight:600;padding:0 .35rem}
.option{display:flex;gap:.6rem;align-items:center;min-height:2.75rem}
.option input{width:1.25rem;height:1.25rem;accent-color:var(--accent)}
.wallet-message{margin:.5rem 0 0;font-weight:600;color:var(--error)}
.wallet-message:empty{display:none}
#wallet-pay{width:100%}
`
  .trim()
  .replace(/\n/g, "")

/** The CSP source that allows exactly the inline styles. */
export const CSS_HASH = `'sha256-${base64Sha256(CSS)}'`
