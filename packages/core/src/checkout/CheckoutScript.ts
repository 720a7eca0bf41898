/**
 * The checkout page's script, served as a static file (`checkout.js`): a few
 * kilobytes, no framework. It reads everything it needs from the page's data
 * attributes (the server escaped them) and talks only to routes under the
 * page's own link, so it works under any path prefix or proxy.
 *
 * - Copy-link: the button appears (it needs the clipboard), the input stays for
 *   copying by hand.
 * - Countdown: ticks every second from the server's clock (offset by the
 *   browser's), turns prominent in the last minute and is announced once then.
 * - Live status: a long-poll of `{link}/status`; each change is written into the
 *   page's `role=status` region (announced to screen readers), and a final state
 *   sends the buyer to the payment's success or error URL after a moment.
 */
export const CHECKOUT_STATUS_SCRIPT = `(function () {
  "use strict";
  var body = document.body;
  var data = body.dataset;
  var strings = JSON.parse(data.strings || "{}");
  var id = data.paymentId;
  var base = id + "/";
  var state = data.state;
  var skew = Date.now() - Number(data.serverNow);
  var expiresAt = Number(data.expiresAt) + skew;
  var $ = function (x) { return document.getElementById(x); };
  var finals = { succeeded: 1, failed: 1, expired: 1, cancelled: 1 };
  var known = {};

  function show(el, on) { if (el) el.hidden = !on; }

  // Copy-link
  var copy = $("copy-link"), link = $("payment-link");
  if (copy && link && navigator.clipboard) {
    show(copy, true);
    var label = copy.textContent;
    copy.addEventListener("click", function () {
      navigator.clipboard.writeText(link.value).then(function () {
        copy.textContent = strings.linkCopied;
        setTimeout(function () { copy.textContent = label; }, 2000);
      }, function () { link.select(); });
    });
  }
  if (link) link.addEventListener("focus", function () { link.select(); });

  // Countdown
  var time = $("countdown-time"), countdown = $("countdown"), warned = false;
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function format(ms) {
    var t = Math.max(0, Math.ceil(ms / 1000)), h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), s = t % 60;
    return h > 0 ? h + ":" + pad(m) + ":" + pad(s) : m + ":" + pad(s);
  }
  function tick() {
    if (!time || finals[state]) return;
    var left = expiresAt - Date.now();
    time.textContent = format(left);
    if (left <= 60000 && !warned) {
      warned = true;
      countdown.className = "countdown urgent";
      countdown.setAttribute("role", "alert");
    }
    if (left <= 0) { poll(0); return; }
    setTimeout(tick, 1000);
  }

  // Live status
  function withPaymentId(url) {
    try {
      var u = new URL(url);
      u.searchParams.set("paymentId", id);
      return u.toString();
    } catch (e) { return ""; }
  }
  function render(next) {
    var words = strings.status[next.status];
    if (!words) return;
    var changed = next.status !== state;
    state = next.status;
    body.setAttribute("data-state", state);
    $("status").className = "status status-" + state;
    if (changed) {
      $("status-heading").textContent = words.heading;
      $("status-text").textContent = words.text;
    }
    var reason = $("status-reason");
    var why = next.failureCode && strings.failure[next.failureCode];
    reason.textContent = why || "";
    show(reason, !!why);
    var tx = $("status-tx");
    if (next.transactionHash && !known.tx) {
      known.tx = next.transactionHash;
      tx.textContent = "";
      tx.appendChild(document.createTextNode(strings.transaction + ": "));
      var code = document.createElement("code");
      code.textContent = next.transactionHash;
      tx.appendChild(code);
      show(tx, true);
    }
    if (state !== "requires_action") show($("pay"), false);
    if (finals[state]) leave();
  }
  function leave() {
    var target = withPaymentId(state === "succeeded" ? data.successUrl : data.errorUrl);
    if (!target) return;
    var back = $("status-return");
    back.textContent = "";
    var a = document.createElement("a");
    a.className = "button";
    a.href = target;
    a.textContent = strings.redirecting;
    back.appendChild(a);
    show(back, true);
    setTimeout(function () { window.location.assign(target); }, 3000);
  }
  var polling = false, failures = 0;
  function poll(wait) {
    if (polling || finals[state]) return;
    polling = true;
    var hold = state === "processing" && !known.tx ? 2000 : wait;
    fetch(base + "status?maxPollMs=" + hold, { headers: { accept: "application/json" }, cache: "no-store" })
      .then(function (r) {
        if (!r.ok) throw new Error(String(r.status));
        return r.json();
      })
      .then(function (next) {
        failures = 0;
        polling = false;
        render(next);
        if (!finals[state]) setTimeout(function () { poll(25000); }, 250);
      }, function () {
        polling = false;
        failures = Math.min(failures + 1, 6);
        setTimeout(function () { poll(25000); }, 1000 * failures);
      });
  }
  window.payCheckout = { render: render, poll: poll, base: base, strings: strings, state: function () { return state; } };
  if (finals[state]) leave();
  else { tick(); poll(25000); }
})();
`
