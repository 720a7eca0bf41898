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
 *   Expired by the clock, it asks for the status at once rather than wait for
 *   the held long-poll to end, and again each second until the server agrees
 *   (its clock may be a moment behind).
 * - Live status: a long-poll of `{link}/status`; each change is written into the
 *   page's `role=status` region (announced to screen readers), and a final state
 *   sends the buyer to the payment's success or error URL after a moment.
 * - Pay from a browser wallet: the option's transactions first, in order, each
 *   confirmed by its hash (a Permit2 token's approvals; a native coin's
 *   transfer, which pays by itself), then its typed data signed, if it has any.
 *   An option that needs the buyer's data first opens the data-collection page
 *   and waits for its `IC_COMPLETE`, heard only from the window it opened and
 *   only at the collect URL's origin (the engine's): any other page or frame
 *   may post that message too, and must not skip the step.
 *
 * Comments inside the script are served to every buyer: the longer whys stay up here.
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
    if (left <= 0) {
      if (state !== "requires_action") return;
      if (polling && held) held.abort(); else poll(0);
      setTimeout(tick, 1000);
      return;
    }
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
  var polling = false, failures = 0, held = null;
  function poll(wait) {
    if (polling || finals[state]) return;
    polling = true;
    var hold = state === "processing" && !known.tx ? 2000 : wait;
    held = window.AbortController ? new AbortController() : null;
    fetch(base + "status?maxPollMs=" + hold, { headers: { accept: "application/json" }, cache: "no-store", signal: held && held.signal })
      .then(function (r) {
        if (!r.ok) throw new Error(String(r.status));
        return r.json();
      })
      .then(function (next) {
        failures = 0;
        polling = false;
        render(next);
        if (!finals[state]) setTimeout(function () { poll(25000); }, 250);
      }, function (e) {
        polling = false;
        if (e && e.name === "AbortError") { poll(0); return; }
        failures = Math.min(failures + 1, 6);
        setTimeout(function () { poll(25000); }, 1000 * failures);
      });
  }
  // Pay from a browser wallet: EIP-6963 discovery, EIP-1193 calls, the engine's wallet routes.
  var wallet = $("wallet"), providers = [], seen = {}, session = null;
  function message(text) { $("wallet-message").textContent = text || ""; }
  function api(route, payload) {
    return fetch(base + route, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(payload)
    }).then(function (r) {
      return r.json().then(function (b) { return { status: r.status, body: b }; }, function () { return { status: r.status, body: {} }; });
    });
  }
  function addProvider(detail) {
    if (!wallet || !detail || !detail.provider || finals[state] || state !== "requires_action") return;
    var key = (detail.info && detail.info.uuid) || "legacy";
    if (seen[key]) return;
    seen[key] = 1;
    providers.push(detail);
    var button = document.createElement("button");
    button.type = "button";
    button.className = "button";
    var info = detail.info || {};
    if (info.icon && String(info.icon).indexOf("data:image/") === 0) {
      var img = document.createElement("img");
      img.src = info.icon;
      img.alt = "";
      button.appendChild(img);
    }
    button.appendChild(document.createTextNode(strings.connectWallet + (info.name ? " (" + info.name + ")" : "")));
    button.addEventListener("click", function () { connect(detail.provider); });
    $("wallet-providers").appendChild(button);
    show(wallet, true);
  }
  function connect(provider) {
    message("");
    provider.request({ method: "eth_requestAccounts" }).then(function (accounts) {
      if (!accounts || !accounts[0]) throw { code: 4001 };
      session = { provider: provider, address: accounts[0], options: [] };
      var a = String(accounts[0]);
      var who = document.createElement("p");
      who.textContent = strings.connectedAs.replace("{address}", a.slice(0, 6) + "…" + a.slice(-4));
      $("wallet-providers").textContent = "";
      $("wallet-providers").appendChild(who);
      return loadOptions();
    }).catch(walletError);
  }
  function loadOptions() {
    return api("options", { address: session.address }).then(function (r) {
      if (r.status !== 200) { poll(0); throw r; }
      session.options = r.body.options;
      var list = $("wallet-option-list");
      list.textContent = "";
      session.options.forEach(function (o, i) {
        var label = document.createElement("label");
        label.className = "option";
        var input = document.createElement("input");
        input.type = "radio";
        input.name = "wallet-option";
        input.value = o.id;
        input.checked = i === 0;
        input.addEventListener("change", chosen);
        label.appendChild(input);
        label.appendChild(document.createTextNode(o.amount + " · " + o.network));
        list.appendChild(label);
      });
      show($("wallet-options"), session.options.length > 0);
      show($("wallet-pay"), session.options.length > 0);
      if (session.options.length === 0) message(r.body.reason || strings.somethingWrong);
      chosen();
    });
  }
  function selected() {
    var input = document.querySelector("input[name=wallet-option]:checked");
    var id = input && input.value;
    return session && session.options.filter(function (o) { return o.id === id; })[0];
  }
  function chosen() {
    var o = selected(), amount = $("token-amount");
    if (o) amount.textContent = strings.youPay.replace("{amount}", strings.onNetwork.replace("{token}", o.amount).replace("{network}", o.network));
    show(amount, !!amount.textContent);
    if (o) $("wallet-pay").textContent = o.typedData ? strings.signAndPay : strings.sendAndPay;
  }
  function switchChain(provider, chainId) {
    var wanted = "0x" + Number(chainId.split(":")[1]).toString(16);
    return provider.request({ method: "eth_chainId" }).then(function (current) {
      if (String(current).toLowerCase() === wanted) return;
      return provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: wanted }] });
    });
  }
  function collected(url) {
    if (!url) return Promise.resolve();
    return new Promise(function (done) {
      var w, o = new URL(url, location.href).origin;
      function heard(e) {
        if (e.source === w && e.origin === o && e.data && e.data.type === "IC_COMPLETE") { removeEventListener("message", heard); done(); }
      }
      addEventListener("message", heard);
      w = window.open(url, "_blank");
    });
  }
  function payNow() {
    var o = selected(), button = $("wallet-pay");
    if (!o) return;
    message("");
    if (o.expiresAt !== null && o.expiresAt * 1000 <= Date.now() - skew + 2000) {
      loadOptions().then(function () { message(strings.quoteRefreshed); }, walletError);
      return;
    }
    button.disabled = true;
    var hashes = [], signs = !!o.typedData, steps = o.transactions.length + (signs ? 1 : 0);
    function send(i) {
      if (i >= o.transactions.length) return Promise.resolve();
      message(!signs && i === steps - 1 ? strings.sendInWallet.replace("{amount}", o.amount)
        : strings.approveInWallet.replace("{step}", String(i + 1)).replace("{steps}", String(steps)));
      return session.provider.request({ method: "eth_sendTransaction", params: [JSON.parse(o.transactions[i])] })
        .then(function (hash) { hashes.push(hash); return send(i + 1); });
    }
    switchChain(session.provider, o.chainId)
      .then(function () { return collected(o.collectDataUrl); })
      .then(function () { return send(0); })
      .then(function () {
        if (!signs) return;
        if (hashes.length > 0) message(strings.signInWallet);
        return session.provider.request({ method: "eth_signTypedData_v4", params: [o.signer, o.typedData] });
      })
      .then(function (signature) { return api("confirm", { optionId: o.id, approvals: hashes, signature: signature }); })
      .then(function (r) {
        button.disabled = false;
        if (r.status === 200) { render(r.body); poll(25000); return; }
        var code = r.body && r.body.code;
        if (code === "quote_expired") return loadOptions().then(function () { message(strings.quoteRefreshed); });
        if (code === "insufficient_balance") { message(strings.insufficientBalance.replace("{amount}", r.body.required)); return; }
        if (r.status === 410 || code === "invalid_state") { poll(0); return; }
        message(strings.somethingWrong);
      })
      .catch(function (e) { button.disabled = false; walletError(e); });
  }
  function walletError(e) {
    message(e && e.code === 4001 ? strings.walletRejected : strings.somethingWrong);
  }
  if (wallet) {
    $("wallet-pay").addEventListener("click", payNow);
    window.addEventListener("eip6963:announceProvider", function (e) { addProvider(e.detail); });
    window.dispatchEvent(new Event("eip6963:requestProvider"));
    // A wallet that injects only window.ethereum (before EIP-6963).
    setTimeout(function () {
      if (providers.length === 0 && window.ethereum) addProvider({ info: { uuid: "legacy" }, provider: window.ethereum });
    }, 500);
  }

  window.payCheckout = { render: render, poll: poll, base: base, strings: strings, state: function () { return state; } };
  if (finals[state]) leave();
  else { tick(); poll(25000); }
})();
`
