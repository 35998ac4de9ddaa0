// Steward's service worker: it caches the app shell only — the script, the styles, the icons,
// the manifest and an offline page, all the same for every owner — and never a page, an API
// answer or anything else of the owner's. Every other request goes to the network untouched.
"use strict";
var CACHE = "steward-shell-v1";
var SHELL = ["/assets/app.js", "/assets/app.css", "/assets/icon.svg", "/assets/icon-192.png", "/assets/icon-512.png",
  "/manifest.webmanifest", "/offline"];

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
