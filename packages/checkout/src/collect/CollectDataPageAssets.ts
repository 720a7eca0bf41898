/**
 * The data-collection page's one inline script (allowed by its hash in the
 * page's content security policy) and its styles: no framework, font or CDN.
 */
import { Encoding } from "effect"
import { sha256, stringToBytes } from "viem"

/**
 * The inline script. Static text: its SHA-256 goes into the page's Content-Security-Policy, so
 * nothing else can run. ES5, for old Android web views.
 *
 * On the done page it tells the embedding wallet `IC_COMPLETE`, as the wallet SDKs and wallets
 * observed listen for it. The message is the object `{type: "IC_COMPLETE", success: true}`: iOS
 * handlers read `body.type` from a dictionary (some also require `success`); Android and React
 * Native receive strings and parse them as JSON, so they get it JSON-encoded. Bridges, in order:
 * - React Native (react-native-webview): `window.ReactNativeWebView.postMessage(json)`; Flutter
 *   wallets alias it to their own channel.
 * - iOS WKWebView script message handlers: `webkit.messageHandlers.payDataCollectionComplete` (the
 *   name in the Swift SDK's guide), then `iOSWallet` (a sample wallet's), with the object.
 * - Android `addJavascriptInterface`: `window.AndroidWallet.onDataCollectionComplete(json)` (the
 *   Kotlin SDK's guide), `window.payDataCollectionComplete.postMessage(json)`.
 * - Flutter `JavaScriptChannel`: `window.FlutterCollectDataBridge.postMessage(json)`.
 * Only the first bridge found is used: wallets alias one name to another (a shim defining
 * `webkit.messageHandlers` on Android, `ReactNativeWebView` on Flutter), and a second message
 * would complete the step twice. Bridges injected after load are waited for (up to 5 s). A page
 * shown in an iframe or opened as a popup also posts the object to its parent or opener (target
 * origin "*": the message carries nothing secret).
 */
export const SCRIPT = `(function () {
  "use strict";
  var w = window;
  var inputs = document.querySelectorAll("input[data-uppercase]");
  for (var i = 0; i < inputs.length; i++) {
    inputs[i].addEventListener("input", function (event) {
      var input = event.target;
      var upper = input.value.toUpperCase();
      if (upper === input.value) return;
      var start = input.selectionStart, end = input.selectionEnd;
      input.value = upper;
      try { input.setSelectionRange(start, end); } catch (e) {}
    });
  }
  var summary = document.getElementById("error-summary");
  if (summary) summary.focus();
  if (document.body.getAttribute("data-state") !== "done") return;
  var message = { type: "IC_COMPLETE", success: true };
  var json = JSON.stringify(message);
  function send(target, method, payload) {
    if (!target || !target[method]) return false;
    try { target[method](payload); return true; } catch (e) { return false; }
  }
  function toWallet() {
    var handlers = w.webkit && w.webkit.messageHandlers;
    return send(w.ReactNativeWebView, "postMessage", json) ||
      (!!handlers && (send(handlers.payDataCollectionComplete, "postMessage", message) ||
        send(handlers.iOSWallet, "postMessage", message))) ||
      send(w.AndroidWallet, "onDataCollectionComplete", json) ||
      send(w.payDataCollectionComplete, "postMessage", json) ||
      send(w.FlutterCollectDataBridge, "postMessage", json);
  }
  try { if (w.parent && w.parent !== w) w.parent.postMessage(message, "*"); } catch (e) {}
  try { if (w.opener) w.opener.postMessage(message, "*"); } catch (e) {}
  var attempts = 0;
  (function attempt() {
    if (toWallet() || ++attempts >= 20) return;
    setTimeout(attempt, 250);
  })();
})();`

/** The CSP source that allows exactly the inline script. */
export const SCRIPT_HASH = `'sha256-${Encoding.encodeBase64(sha256(stringToBytes(SCRIPT), "bytes"))}'`

export const CSS = `
:root{color-scheme:light;--bg:#fff;--fg:#1f2328;--muted:#59636e;--border:#d1d9e0;--field:#f6f8fa;--accent:#0969da;--accent-fg:#fff;--error:#cf222e;--error-bg:#ffebe9;--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){color-scheme:dark;--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--border:#3d444d;--field:#151b23;--accent:#4493f8;--accent-fg:#fff;--error:#ff7b72;--error-bg:#2d1214;--ok:#3fb950}}
:root[data-theme=dark]{color-scheme:dark;--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--border:#3d444d;--field:#151b23;--accent:#4493f8;--accent-fg:#fff;--error:#ff7b72;--error-bg:#2d1214;--ok:#3fb950}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;-webkit-text-size-adjust:100%}
main{max-width:32rem;margin:0 auto;padding:1.5rem 1rem 3rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem}
.intro,.hint{color:var(--muted)}
.intro{margin:0 0 1.5rem}
.field{margin:0 0 1.25rem}
label,legend{display:block;font-weight:600;margin:0 0 .25rem}
.req{font-weight:400;color:var(--muted)}
.hint{font-size:.875rem;margin:0 0 .4rem}
.error{color:var(--error);font-weight:600;font-size:.9rem;margin:0 0 .4rem}
input[type=text],input[type=date]{display:block;width:100%;min-height:3rem;padding:.6rem .8rem;font:inherit;color:inherit;background:var(--field);border:1px solid var(--border);border-radius:.75rem;-webkit-appearance:none;appearance:none}
input:focus,button:focus,a:focus,.summary:focus{outline:3px solid var(--accent);outline-offset:2px}
input[aria-invalid=true]{border:2px solid var(--error)}
.check{display:grid;grid-template-columns:auto 1fr;gap:.1rem .75rem;align-items:start}
.check input{width:1.5rem;height:1.5rem;margin:.1rem 0 0;accent-color:var(--accent)}
.check label{grid-column:2;margin:0}
.check .hint,.check .error{grid-column:2}
.check input[aria-invalid=true]{outline:2px solid var(--error);outline-offset:2px}
fieldset{border:1px solid var(--border);border-radius:.75rem;margin:0 0 1.25rem;padding:.75rem 1rem 0}
legend{padding:0 .35rem}
.note{margin:0 0 .75rem}
.summary{border:2px solid var(--error);background:var(--error-bg);border-radius:.75rem;padding:.75rem 1rem;margin:0 0 1.5rem}
.summary h2{font-size:1.1rem;margin:0 0 .35rem}
.summary ul{margin:0;padding-left:1.2rem}
.summary a{color:var(--error);font-weight:600}
button{display:block;width:100%;min-height:3rem;margin-top:1.75rem;font:inherit;font-weight:600;color:var(--accent-fg);background:var(--accent);border:0;border-radius:.75rem;cursor:pointer}
.done h1{color:var(--ok)}
`
  .trim()
  .replace(/\n/g, "")
