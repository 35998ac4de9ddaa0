// Steward web app: the composer, streaming chat, approval cards, the menu, the theme and the
// service worker. No inline script (CSP script-src 'self'); every piece of server text goes in
// through textContent, never as HTML — except the markup the server renders for exactly this
// (pages.go's event): an answer's answer_html (Markdown, sanitized by internal/markdown), a
// tool call's chip_html and a suspended turn's card_html (every value escaped by the server's
// page builder).
"use strict";
(function () {
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // post sends a request and calls onEvent for each server-sent event of the answer. Any
  // failure — the server unreachable, an error status, a stream cut before its last event —
  // becomes one event {type: "error", failed: true} in words.
  function post(url, body, type, onEvent) {
    var headers = { "X-CSRF-Token": csrf, "Accept": "text/event-stream" };
    if (type) headers["Content-Type"] = type;
    var final = false;
    var emit = function (e) {
      final = final || ["completed", "suspended", "continuing", "error"].indexOf(e.type) >= 0;
      onEvent(e);
    };
    return fetch(url, { method: "POST", headers: headers, body: body, credentials: "same-origin" }).then(function (res) {
      if (!res.ok) {
        return res.text().then(function (t) {
          emit({ type: "error", failed: true, text: "Steward refused this (" + res.status + "): " + (t.trim() || res.statusText) });
        });
      }
      var reader = res.body.getReader(), dec = new TextDecoder(), buf = "";
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) {
            if (!final) emit({ type: "error", failed: true, text: "The connection to Steward was lost before the turn ended. It may still finish: reload to see." });
            return;
          }
          buf += dec.decode(r.value, { stream: true });
          var i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            var chunk = buf.slice(0, i); buf = buf.slice(i + 2);
            chunk.split("\n").forEach(function (line) {
              if (line.indexOf("data: ") === 0) emit(JSON.parse(line.slice(6)));
            });
          }
          return pump();
        });
      }
      return pump();
    }).catch(function () {
      if (!final) emit({ type: "error", failed: true, text: "Steward could not be reached. Check your connection, then retry." });
    });
  }

  // fromServer is the element of markup the server rendered (see the top of this file).
  function fromServer(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    return t.content.firstElementChild;
  }

  // chipOf puts a tool call's chip (the server's chip_html) in container, or in place of the
  // call's chip when its turn shows it already (its result came, maybe after an approval),
  // keeping it open if it was.
  function chipOf(container, e) {
    var d = fromServer(e.chip_html || "");
    if (!d) return;
    var old = (container.closest(".turn") || container).querySelector('details.chip[data-call="' + CSS.escape(d.dataset.call) + '"]');
    if (old) { d.open = old.open; old.replaceWith(d); } else container.appendChild(d);
  }

  // note is a status line under a turn.
  function note(cls, text) {
    var p = el("p", "status " + cls, text);
    p.setAttribute("role", "status");
    return p;
  }

  // verdictNote says how a call came out (the server's decisionNote markup): {class, label, words}.
  function verdictNote(v) {
    var p = el("p", "decision " + v["class"]);
    p.setAttribute("role", "note");
    p.appendChild(el("strong", null, v.label));
    p.appendChild(document.createTextNode(" " + v.words));
    return p;
  }

  // settle turns a card that can no longer be decided here into how each of its calls came
  // out (settled: the server's words by call id, "*" for the rest), without buttons.
  function settle(form, settled) {
    var focused = form.contains(document.activeElement), first = null;
    form.querySelectorAll("fieldset.card").forEach(function (fs) {
      var v = settled[fs.dataset.call] || settled["*"];
      if (!v) return;
      var p = verdictNote(v);
      form.parentNode.insertBefore(p, form);
      first = first || p;
    });
    // The keyboard stays where it was: on the verdict that replaced the card.
    if (focused && first) { first.tabIndex = -1; first.focus(); }
    var pending = form.closest(".pending");
    if (pending && !pending.querySelector("a.story")) {
      var a = el("a", "story", "The turn's story"); a.href = "/turns/" + form.dataset.turn; pending.appendChild(a);
    }
    form.remove();
    refreshBadge();
  }

  // watchCards: every few seconds, each card on the page that was not decided here asks its
  // turn's state (GET /turns/{id}/status); once it was decided elsewhere — another tab, a
  // one-tap link, Telegram — or expired, the card says so.
  function watchCards() {
    setInterval(function () {
      var asked = {};
      document.querySelectorAll("form.approval:not([data-sent])").forEach(function (form) {
        var id = form.dataset.turn;
        if (asked[id]) return;
        asked[id] = true;
        fetch("/turns/" + encodeURIComponent(id) + "/status", { credentials: "same-origin", headers: { "Accept": "application/json" } })
          .then(function (res) { return res.ok ? res.json() : null; })
          .then(function (e) {
            if (!e || !e.settled) return;
            document.querySelectorAll('form.approval:not([data-sent])[data-turn="' + CSS.escape(id) + '"]').forEach(function (f) { settle(f, e.settled); });
          })
          .catch(function () {});
      });
    }, 4000);
  }

  // wire makes a card form work: a choice on the only card submits at once; with several,
  // each card records its choice and "Submit decisions" sends them all in one request.
  function wire(form) {
    var cards = form.querySelectorAll("fieldset.card");
    form.classList.toggle("single", cards.length === 1);
    form.addEventListener("click", function (ev) {
      var b = ev.target.closest("button[data-choice]");
      if (!b) return;
      var fs = b.closest("fieldset");
      fs.dataset.choice = b.dataset.choice;
      fs.querySelectorAll("button[data-choice]").forEach(function (x) { x.setAttribute("aria-pressed", String(x === b)); });
      if (cards.length === 1) form.requestSubmit();
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (form.dataset.sent) return;
      var decisions = [], missing = false;
      cards.forEach(function (fs) {
        var c = fs.dataset.choice;
        if (!c) { missing = true; return; }
        var d = { call_id: fs.dataset.call, args_hash: fs.dataset.hash, approve: c !== "deny", message: fs.querySelector("input[name=message]").value };
        if (c === "always") d.always = "args";
        decisions.push(d);
      });
      if (missing) { form.appendChild(el("p", "error", "Choose for every card first.")); return; }
      var focused = form.contains(document.activeElement);
      form.querySelectorAll("button").forEach(function (x) { x.disabled = true; });
      form.dataset.sent = "1";
      var out = form.parentNode.querySelector(".result") || document.getElementById("log");
      var decidedShown = false;
      var view = turnView(out, function () { setBusy(false); });
      setBusy(true);
      post("/turns/" + form.dataset.turn + "/confirm", JSON.stringify({ decisions: decisions }), "application/json", function (e) {
        if (e.type === "error" && !decidedShown) {
          form.querySelectorAll("button").forEach(function (x) { x.disabled = false; });
          delete form.dataset.sent;
        } else if (!decidedShown) {
          // The server took the decisions: the card says what they were, without buttons.
          decidedShown = true;
          var at = new Date().toISOString().slice(11, 16) + " UTC", first = null;
          cards.forEach(function (fs) {
            var denied = fs.dataset.choice === "deny", msg = fs.querySelector("input[name=message]").value;
            var p = verdictNote({ "class": denied ? "denied" : "approved", label: denied ? "Denied" : "Approved",
              words: "by you · " + at + (msg ? " · “" + msg + "”" : "") });
            form.parentNode.insertBefore(p, form);
            first = first || p;
          });
          form.remove();
          // The keyboard stays where it was: on the verdict that replaced the card.
          if (focused && first) { first.tabIndex = -1; first.focus(); }
        }
        view(e);
      });
    });
  }

  // turnView renders a turn's events into container and returns the event handler; done is
  // called once the turn stopped running (its last event, or a failure).
  function turnView(container, done, retry) {
    var answer = null, waiting = null;
    var handler = function (e) {
      if (e.type === "text") {
        if (!answer) { answer = el("div", "msg assistant md"); container.appendChild(answer); }
        answer.textContent += e.text;
      } else if (e.type === "tool_call" || e.type === "tool_result") {
        chipOf(container, e);
        answer = null;
      } else if (e.type === "suspended") {
        conversation(e.turn.conversation_id);
        var form = fromServer(e.card_html || "");
        if (form) {
          var pending = el("div", "pending");
          pending.appendChild(form);
          var result = el("div", "result"); result.setAttribute("aria-live", "polite");
          pending.appendChild(result);
          container.appendChild(pending);
          wire(form);
        } else if (e.turn.awaiting) {
          // The owner decided; household members still have to (the server's words).
          container.appendChild(note("awaiting", "Your decision is recorded. The turn is " + e.turn.awaiting + "."));
        }
      } else if (e.type === "completed") {
        conversation(e.turn.conversation_id);
        if (e.answer_html) {
          // The server's Markdown rendering of the answer replaces the streamed plain text.
          if (!answer) { answer = el("div", "msg assistant md"); container.appendChild(answer); }
          answer.innerHTML = e.answer_html;
        } else if (!answer && e.turn.answer) {
          container.appendChild(el("div", "msg assistant md", e.turn.answer));
        }
        playButton(answer || container.querySelector(".msg.assistant:last-of-type"));
        var a = el("a", "story", "The turn's story"); a.href = "/turns/" + e.turn.turn_id; container.appendChild(a);
      } else if (e.type === "continuing") {
        // The turn stopped before the server's deadline and goes on in the background: say
        // so once, and poll its status until it ends, then render its final event.
        conversation(e.turn.conversation_id);
        if (!waiting) { waiting = el("p", "status continuing", "Still working on it… (continuing in the background)"); container.appendChild(waiting); }
        setTimeout(function () { poll(e.turn.turn_id, handler); }, 3000);
      } else if (cancelled(e)) {
        container.appendChild(note("stopped", "Stopped. Nothing more was done."));
      } else if (e.type === "error") {
        var p = el("p", "error", e.failed ? e.text : "Error: " + (e.text || (e.turn && e.turn.error) || "the turn failed"));
        p.setAttribute("role", "alert");
        container.appendChild(p);
        if (retry) {
          var b = el("button", "retry", "Retry"); b.type = "button";
          b.addEventListener("click", retry);
          container.appendChild(b);
        }
      }
      if (waiting && e.type !== "continuing") { waiting.remove(); waiting = null; }
      if (["completed", "suspended", "error"].indexOf(e.type) >= 0 && done) done(e);
      container.scrollIntoView({ block: "end" });
    };
    return handler;
  }

  // cancelled is a turn's last event when the owner stopped it.
  function cancelled(e) { return e.type === "error" && e.turn && e.turn.status === "cancelled"; }

  // poll reads a continuing turn's status (GET /turns/{id}/status answers it as a stream
  // event) and hands it to the turn's handler, which polls again while it is continuing.
  function poll(turnID, handle) {
    fetch("/turns/" + encodeURIComponent(turnID) + "/status", { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (res) { return res.json(); })
      .then(function (e) { handle(e); })
      .catch(function () { setTimeout(function () { poll(turnID, handle); }, 5000); });
  }

  // conversation records the conversation a new chat's first turn started: the composer sends
  // the next message into it, the address becomes /c/{id} (a reload keeps it) and the list
  // shows it.
  function conversation(id) {
    var input = document.querySelector("#chat input[name=conversation_id]");
    if (!input || !id || input.value === id) return;
    input.value = id;
    if (location.pathname !== "/c/" + id) history.replaceState(null, "", "/c/" + id);
    var list = document.querySelector("nav.conversations ol");
    if (list && !list.querySelector('a[href="/c/' + id + '"]')) {
      var li = el("li"), a = el("a");
      a.href = "/c/" + id; a.setAttribute("aria-current", "page");
      a.appendChild(el("span", "title", firstMessage || "New conversation"));
      li.appendChild(a);
      list.insertBefore(li, list.firstChild);
      var none = document.querySelector("nav.conversations p.meta");
      if (none) none.remove();
    }
  }
  var firstMessage = "";

  // setBusy marks a turn running: Send is disabled, the working indicator and Stop show. Stop
  // is live once the turn's started event named it (running).
  var busy = false, running = null;
  function setBusy(on) {
    busy = on;
    if (!on) running = null;
    var send = document.getElementById("send"), working = document.getElementById("working"), stop = document.getElementById("stop");
    if (send) send.disabled = on;
    if (working) working.hidden = !on;
    if (stop) { stop.hidden = !on; stop.disabled = !running; }
    if (!on) refreshBadge();
  }

  // stop asks the running turn to end (POST /turns/{id}/cancel): it ends cancelled at its
  // next step, and its stream's last event says so.
  function stop(button) {
    if (!running) return;
    button.disabled = true;
    fetch("/turns/" + encodeURIComponent(running) + "/cancel", { method: "POST", credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, "Accept": "application/json" } })
      .then(function (res) { if (!res.ok) return res.json().then(function (b) { throw new Error(b.error || res.statusText); }); })
      .catch(function (err) {
        button.disabled = false;
        var p = el("p", "error", "Could not stop the turn: " + err.message);
        p.setAttribute("role", "alert");
        document.getElementById("log").appendChild(p);
      });
  }

  // The composer: Enter sends, Shift+Enter is a new line; one turn at a time; on a failure the
  // text comes back into the box and Retry sends it again.
  function composer(chat) {
    var log = document.getElementById("log"), box = chat.message;
    function send(msg) {
      var empty = document.getElementById("empty");
      if (empty) empty.remove();
      var turn = el("div", "turn");
      turn.appendChild(el("div", "msg user", msg));
      log.appendChild(turn);
      if (!chat.conversation_id.value) firstMessage = msg.slice(0, 80);
      var body = new URLSearchParams({ message: msg, conversation_id: chat.conversation_id.value });
      setBusy(true);
      var retry = function () {
        if (busy) return;
        turn.remove();
        if (box.value.trim() === msg) box.value = "";
        send(msg);
      };
      var view = turnView(turn, function (e) {
        setBusy(false);
        if (e.type === "error" && !cancelled(e) && !box.value.trim()) box.value = msg; // the typed text stays
      }, retry);
      post("/chat", body, "application/x-www-form-urlencoded", function (e) {
        if (e.type === "started" && e.turn) {
          running = e.turn.turn_id;
          var b = document.getElementById("stop");
          if (b) b.disabled = false;
        }
        view(e);
      });
    }
    var stopButton = document.getElementById("stop");
    if (stopButton) stopButton.addEventListener("click", function () { stop(stopButton); });
    chat.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var msg = box.value.trim();
      if (!msg || busy) return;
      box.value = "";
      voiceNote("");
      send(msg);
    });
    box.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        chat.requestSubmit();
      }
    });
  }

  // voiceNote says, in words, what happened to a recording or a reading (#voice-note).
  function voiceNote(text, alert) {
    var n = document.getElementById("voice-note");
    if (!n) return;
    n.textContent = text;
    n.hidden = !text;
    n.setAttribute("role", alert ? "alert" : "status");
  }

  // errorOf reads a voice answer's {"error": words}, or says what the status means.
  function errorOf(res) {
    return res.json().then(function (b) { return b.error || res.statusText; }, function () { return res.statusText || "HTTP " + res.status; });
  }

  // recorder is the composer's microphone (docs/VOICE.md): tap Record to start (the browser
  // asks for the microphone the first time), tap Stop to end; the recording is posted to
  // /voice/transcribe and the transcript is put in the box, to edit and send. No microphone,
  // a refused permission or a browser without MediaRecorder is said in words.
  function recorder(chat) {
    var mic = document.getElementById("mic"), box = chat.message;
    if (!mic) return;
    mic.hidden = false;
    var rec = null, chunks = [];
    function idle() {
      rec = null;
      mic.textContent = "Record";
      mic.setAttribute("aria-pressed", "false");
      mic.classList.remove("recording");
    }
    function send(blob) {
      voiceNote("Transcribing…");
      mic.disabled = true;
      fetch("/voice/transcribe", { method: "POST", credentials: "same-origin", body: blob,
        headers: { "X-CSRF-Token": csrf, "Accept": "application/json", "Content-Type": blob.type || "application/octet-stream" } })
        .then(function (res) {
          if (!res.ok) return errorOf(res).then(function (m) { throw new Error(m); });
          return res.json();
        })
        .then(function (t) {
          box.value = box.value.trim() ? box.value.trim() + " " + t.text : t.text;
          voiceNote("Transcribed: check the text, then send it.");
          box.focus();
        })
        .catch(function (err) { voiceNote("Could not transcribe the recording: " + err.message, true); })
        .then(function () { mic.disabled = false; });
    }
    function start() {
      if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia || typeof MediaRecorder === "undefined") {
        voiceNote("This browser cannot record audio here (it needs a secure connection and a microphone). Type your message instead.", true);
        return;
      }
      navigator.mediaDevices.getUserMedia({ audio: true }).then(function (stream) {
        chunks = [];
        rec = new MediaRecorder(stream);
        rec.addEventListener("dataavailable", function (e) { if (e.data && e.data.size) chunks.push(e.data); });
        rec.addEventListener("stop", function () {
          stream.getTracks().forEach(function (t) { t.stop(); });
          var blob = new Blob(chunks, { type: (rec && rec.mimeType) || "audio/webm" });
          idle();
          if (blob.size) send(blob); else voiceNote("Nothing was recorded. Try again.", true);
        });
        rec.start();
        mic.textContent = "Stop recording";
        mic.setAttribute("aria-pressed", "true");
        mic.classList.add("recording");
        voiceNote("Recording… tap Stop recording when you are done.");
      }, function (err) {
        var name = err && err.name;
        if (name === "NotAllowedError" || name === "SecurityError") {
          voiceNote("Steward may not use the microphone: allow it in the browser's site settings, or type your message.", true);
        } else if (name === "NotFoundError" || name === "OverconstrainedError") {
          voiceNote("No microphone was found. Connect one, or type your message.", true);
        } else {
          voiceNote("The microphone could not be started (" + (name || "unknown error") + "). Type your message instead.", true);
        }
      });
    }
    mic.addEventListener("click", function () {
      if (rec && rec.state === "recording") rec.stop(); else if (!rec) start();
    });
  }

  // play reads an answer aloud: its Play button posts the answer's text to /voice/speak and
  // plays the audio; a second tap stops it.
  var playing = null;
  function play(button) {
    if (playing) { playing.pause(); playing = null; }
    var msg = button.previousElementSibling;
    if (!msg || button.dataset.state === "playing") { button.dataset.state = ""; button.textContent = "Play"; return; }
    button.disabled = true;
    button.textContent = "Loading…";
    fetch("/voice/speak", { method: "POST", credentials: "same-origin", body: JSON.stringify({ text: msg.textContent }),
      headers: { "X-CSRF-Token": csrf, "Content-Type": "application/json" } })
      .then(function (res) {
        if (!res.ok) return errorOf(res).then(function (m) { throw new Error(m); });
        return res.blob();
      })
      .then(function (blob) {
        var audio = new Audio(URL.createObjectURL(blob));
        playing = audio;
        button.dataset.state = "playing";
        button.textContent = "Stop reading";
        audio.addEventListener("ended", function () { button.dataset.state = ""; button.textContent = "Play"; URL.revokeObjectURL(audio.src); });
        return audio.play();
      })
      .catch(function (err) {
        button.dataset.state = "";
        button.textContent = "Play";
        voiceNote("Could not read the answer aloud: " + err.message, true);
      })
      .then(function () { button.disabled = false; });
  }

  // playButton follows a new answer when the server reads answers aloud (#chat[data-speak]).
  function playButton(answer) {
    var chat = document.getElementById("chat");
    if (!chat || !chat.hasAttribute("data-speak") || !answer || (answer.nextElementSibling && answer.nextElementSibling.matches("[data-play]"))) return;
    var b = el("button", "play secondary", "Play");
    b.type = "button";
    b.setAttribute("data-play", "");
    answer.after(b);
  }

  // The theme: the system's unless the owner chose (a cookie the server reads, so the page
  // comes in the right colours).
  function theme() {
    var b = document.querySelector(".theme-toggle");
    if (!b) return;
    var root = document.documentElement;
    function dark() { return root.dataset.theme ? root.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches; }
    function show() {
      var d = dark();
      b.textContent = d ? "Light" : "Dark";
      b.setAttribute("aria-label", d ? "Light mode" : "Dark mode");
    }
    b.hidden = false;
    show();
    b.addEventListener("click", function () {
      root.dataset.theme = dark() ? "light" : "dark";
      document.cookie = "steward_theme=" + root.dataset.theme + "; path=/; max-age=31536000; samesite=strict";
      show();
    });
  }

  // The menu of a phone's header.
  function menu() {
    var b = document.querySelector(".menu-toggle");
    if (!b) return;
    b.addEventListener("click", function () {
      var open = b.getAttribute("aria-expanded") !== "true";
      b.setAttribute("aria-expanded", String(open));
      document.querySelector("header").classList.toggle("open", open);
    });
  }

  // badge keeps the approvals link's count of writes waiting current — the navigation's and,
  // on a phone, the header's — at once after a turn ends or is decided here, and every 20 s
  // for what happens elsewhere (another tab, a link, a job).
  function refreshBadge() {
    if (!document.getElementById("pending-badge")) return;
    fetch("/approvals/count", { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (c) {
        if (!c) return;
        document.querySelectorAll(".badge[data-count]").forEach(function (b) {
          b.dataset.count = c.writes;
          b.lastChild.textContent = String(c.writes);
          b.hidden = c.writes === 0;
        });
        var link = document.querySelector(".pending-link");
        if (link) link.hidden = c.writes === 0;
      })
      .catch(function () {});
  }

  document.addEventListener("DOMContentLoaded", function () {
    theme();
    menu();
    if (document.getElementById("pending-badge")) setInterval(refreshBadge, 20000);
    if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(function () {});
    document.querySelectorAll("form.approval").forEach(wire);
    watchCards();
    document.querySelectorAll("[data-poll]").forEach(function (p) {
      var view = turnView(p.parentNode, null);
      poll(p.dataset.poll, function (e) { p.remove(); view(e); });
    });
    var chat = document.getElementById("chat");
    if (chat) { composer(chat); recorder(chat); }
    document.addEventListener("click", function (ev) {
      var b = ev.target.closest("button[data-play]");
      if (b) play(b);
    });
    var log = document.getElementById("log");
    if (log && log.lastElementChild) log.lastElementChild.scrollIntoView({ block: "end" });
  });
})();
