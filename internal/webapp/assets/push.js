// Settings → Notify this device (docs/ARCHITECTURE.md §7, Web Push): ask the browser for
// permission and a push subscription made with the server's VAPID public key, then save it
// as a notification channel (POST /settings/push). Loaded only by the settings page.
"use strict";
(function () {
  var box = document.getElementById("push");
  var button = document.getElementById("push-subscribe");
  if (!box || !button) return;
  var status = document.getElementById("push-status");
  var nameInput = document.getElementById("push-name");
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  function say(msg, bad) {
    status.textContent = msg;
    status.className = bad ? "error" : "note";
  }

  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    say("This browser cannot receive push notifications here. On an iPhone or iPad, add Steward to the Home Screen first and open it from there.", true);
    button.disabled = true;
    return;
  }

  // The VAPID key is unpadded base64url; subscribe() wants its bytes.
  function bytes(b64) {
    var s = atob(b64.replace(/-/g, "+").replace(/_/g, "/"));
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  function sameKey(sub, key) {
    var k = sub.options && sub.options.applicationServerKey;
    if (!k) return true;
    k = new Uint8Array(k);
    if (k.length !== key.length) return false;
    for (var i = 0; i < k.length; i++) if (k[i] !== key[i]) return false;
    return true;
  }

  // subscription returns this browser's subscription for the server's key: the one it has,
  // or a new one (an old one made with another key is dropped first).
  function subscription(reg) {
    var key = bytes(box.getAttribute("data-vapid-key"));
    return reg.pushManager.getSubscription().then(function (old) {
      if (old && sameKey(old, key)) return old;
      return (old ? old.unsubscribe() : Promise.resolve()).then(function () {
        return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      });
    });
  }

  button.addEventListener("click", function () {
    var name = (nameInput.value || "").trim().toLowerCase();
    button.disabled = true;
    say("Asking this browser for permission to notify…");
    Notification.requestPermission().then(function (perm) {
      if (perm !== "granted") {
        throw new Error("Notifications are blocked for this site. Allow them in the browser's site settings, then press Notify this device again.");
      }
      return navigator.serviceWorker.register("/sw.js").then(function () { return navigator.serviceWorker.ready; });
    }).then(subscription).then(function (sub) {
      say("Saving this device…");
      return fetch("/settings/push", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ name: name, subscription: sub.toJSON() })
      }).catch(function () {
        throw new Error("Steward could not be reached, so this device was not saved. Check the connection and try again.");
      });
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (body) {
        if (!res.ok) throw new Error(body.error || "Steward could not save this device (" + res.status + "). Try again in a moment.");
        say("Done: this device is notified as the channel “" + body.name + "”." + (body.default ? " It is your default channel." : " Make it the default in Notification channels to get approvals here."));
      });
    }).catch(function (err) {
      var msg = err && err.message ? err.message : String(err);
      if (err && err.name && err.name !== "Error") msg = "This browser refused the subscription: " + msg;
      say(msg, true);
    }).then(function () { button.disabled = false; });
  });
})();
