// Steward's service worker: it caches the app shell only — the scripts, the styles, the icons,
// the manifest and an offline page, all the same for every owner — and never a page, an API
// answer or anything else of the owner's. Every other request goes to the network untouched.
// It also shows Web Push notifications (docs/ARCHITECTURE.md §7): Approve and Deny POST the
// notification's one-tap link (a GET never decides); a tap on the body opens the approvals.
"use strict";
var CACHE = "steward-shell-v2";
var SHELL = ["/assets/app.js", "/assets/app.css", "/assets/push.js", "/assets/icon.svg", "/assets/icon-192.png",
  "/assets/icon-512.png", "/manifest.webmanifest", "/offline"];

self.addEventListener("install", function (ev) {
  ev.waitUntil(caches.open(CACHE).then(function (c) { return c.addAll(SHELL); }).then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (ev) {
  ev.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k !== CACHE; }).map(function (k) { return caches.delete(k); }));
  }).then(function () { return self.clients.claim(); }));
});

self.addEventListener("fetch", function (ev) {
  var req = ev.request;
  if (req.method !== "GET") return;
  var url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  if (SHELL.indexOf(url.pathname) >= 0) {
    // The network first (a deploy changes the shell), the cached copy when it is down.
    ev.respondWith(fetch(req).then(function (res) {
      if (res.ok) { var copy = res.clone(); caches.open(CACHE).then(function (c) { c.put(req, copy); }); }
      return res;
    }).catch(function () { return caches.match(req); }));
    return;
  }
  if (req.mode === "navigate") {
    // A page is the owner's: never cached; offline, the offline page instead.
    ev.respondWith(fetch(req).catch(function () { return caches.match("/offline"); }));
  }
});

// A push's payload is PushPayload (internal/channel/webpush.go): title, body, tag, url and
// the actions, each with its one-tap link.
self.addEventListener("push", function (ev) {
  var d = {};
  try { d = ev.data ? ev.data.json() : {}; } catch (e) { d = { body: ev.data ? ev.data.text() : "" }; }
  var links = {}, actions = [];
  (Array.isArray(d.actions) ? d.actions : []).forEach(function (a) {
    if (a && (a.action === "approve" || a.action === "deny") && typeof a.url === "string") {
      links[a.action] = a.url;
      actions.push({ action: a.action, title: String(a.title || a.action) });
    }
  });
  ev.waitUntil(self.registration.showNotification(String(d.title || "Steward"), {
    body: String(d.body || ""), tag: d.tag ? String(d.tag) : undefined, icon: "/assets/icon-192.png",
    actions: actions, requireInteraction: actions.length > 0,
    data: { url: local(d.url) || "/approvals", links: links }
  }));
});

self.addEventListener("notificationclick", function (ev) {
  var n = ev.notification, data = n.data || {};
  n.close();
  var link = ev.action && data.links ? data.links[ev.action] : "";
  ev.waitUntil(link ? decide(link, ev.action) : show(data.url || "/approvals"));
});

// local is a path of this app ("/…", never "//…"), or "".
function local(u) {
  return typeof u === "string" && u.charAt(0) === "/" && u.charAt(1) !== "/" ? u : "";
}

// decide POSTs a one-tap link on this server — its path only: the link's page is this app's
// — and shows the outcome in words: decided once, or why nothing was changed.
function decide(link, action) {
  var path = "";
  try { path = new URL(link).pathname; } catch (e) { path = ""; }
  if (!/^\/a\/[A-Za-z0-9_-]{20,100}$/.test(path)) return show("/approvals");
  return fetch(path, { method: "POST", credentials: "omit", headers: { "Accept": "application/json" } }).then(function (res) {
    return res.json().then(function (b) {
      var title = b.decided ? (action === "approve" ? "Approved" : "Denied") : "Not decided";
      return tell(title, String(b.message || ""));
    });
  }).catch(function () {
    return tell("Not decided", "Steward could not be reached, so nothing was changed. Open the approvals to decide.");
  });
}

function tell(title, body) {
  return self.registration.showNotification(title, { body: body, icon: "/assets/icon-192.png", data: { url: "/approvals" } });
}

// show focuses an open window of the app on url, or opens one.
function show(url) {
  url = local(url) || "/approvals";
  return self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (list) {
    if (!list.length) return self.clients.openWindow(url);
    var win = list[0];
    return win.navigate(url).then(function (c) {
      return (c || win).focus().catch(function () { return c; });
    }).catch(function () { return self.clients.openWindow(url); });
  });
}
