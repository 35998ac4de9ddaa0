// Steward web app: streaming chat and approval cards. No inline script (CSP script-src 'self');
// every piece of server text goes in through textContent, never as HTML.
"use strict";
(function () {
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // visible shows the invisible characters of a tool's arguments (bidirectional overrides,
  // zero-width spaces, controls) as their code points, so "txt.exe.pdf" cannot hide
  // "fdp.exe.txt" on an approval card (as steward.Visible does on the server).
  var hiddenChars = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;
  function visible(s) {
    return s.replace(hiddenChars, function (c) {
      return "\u27e8U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "\u27e9";
    });
  }

  // post sends a request and calls onEvent for each server-sent event of the answer.
  function post(url, body, type, onEvent) {
    var headers = { "X-CSRF-Token": csrf, "Accept": "text/event-stream" };
    if (type) headers["Content-Type"] = type;
    return fetch(url, { method: "POST", headers: headers, body: body, credentials: "same-origin" }).then(function (res) {
      if (!res.ok) {
        return res.text().then(function (t) { onEvent({ type: "error", text: t.trim() || res.statusText }); });
      }
      var reader = res.body.getReader(), dec = new TextDecoder(), buf = "";
      function pump() {
        return reader.read().then(function (r) {
          if (r.done) return;
          buf += dec.decode(r.value, { stream: true });
          var i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            var chunk = buf.slice(0, i); buf = buf.slice(i + 2);
            chunk.split("\n").forEach(function (line) {
              if (line.indexOf("data: ") === 0) onEvent(JSON.parse(line.slice(6)));
            });
          }
          return pump();
        });
      }
      return pump();
    });
  }

  // card builds the approval form of a suspended turn: one card per pending call.
  function card(turn, raw) {
    var form = el("form", "approval");
    form.dataset.turn = turn.turn_id;
    form.setAttribute("aria-label", "Approval needed");
    (turn.pending || []).forEach(function (p) {
      var fs = el("fieldset", "card");
      fs.dataset.call = p.call_id; fs.dataset.hash = p.args_hash;
      var lg = el("legend", null, "Approve "); lg.appendChild(el("code", "tool", p.tool)); lg.appendChild(document.createTextNode("?"));
      fs.appendChild(lg);
      if (p.reason === "tainted") {
        var held = el("p", "held", "Held: this turn read outside content (" + (p.taint || "unknown source") + "); it may carry your data out");
        held.setAttribute("role", "note"); fs.appendChild(held);
      }
      if (!p.reversible) {
        var fin = el("p", "final", "This can't be undone once it runs.");
        fin.setAttribute("role", "note"); fs.appendChild(fin);
      }
      fs.appendChild(el("pre", "args", visible((raw && raw[p.call_id]) || JSON.stringify(p.args))));
      var h = el("p", "hash", "args hash "); h.appendChild(el("code", null, p.args_hash.slice(0, 12))); fs.appendChild(h);
      var lab = el("label", null, "Message if you deny (optional) ");
      var inp = el("input"); inp.type = "text"; inp.name = "message"; inp.maxLength = 500; lab.appendChild(inp); fs.appendChild(lab);
      var btns = el("div", "buttons");
      [["approve", "Approve"], ["deny", "Deny"]].concat(p.always_offered ? [["always", "Always allow exactly this"]] : []).forEach(function (c) {
        var b = el("button", null, c[1]); b.type = "button"; b.dataset.choice = c[0]; btns.appendChild(b);
      });
      fs.appendChild(btns);
      form.appendChild(fs);
    });
    var s = el("button", "submit", "Submit decisions"); s.type = "submit"; form.appendChild(s);
    wire(form);
    return form;
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
      var decisions = [], missing = false;
      cards.forEach(function (fs) {
        var c = fs.dataset.choice;
        if (!c) { missing = true; return; }
        var d = { call_id: fs.dataset.call, args_hash: fs.dataset.hash, approve: c !== "deny", message: fs.querySelector("input[name=message]").value };
        if (c === "always") d.always = "args";
        decisions.push(d);
      });
      if (missing) { form.appendChild(el("p", "error", "Choose for every card first.")); return; }
      form.querySelectorAll("button").forEach(function (x) { x.disabled = true; });
      var out = form.parentNode.querySelector(".result") || document.getElementById("log");
      var view = turnView(out);
      post("/turns/" + form.dataset.turn + "/confirm", JSON.stringify({ decisions: decisions }), "application/json", view);
    });
  }

  // turnView renders a turn's events into container and returns the event handler.
  function turnView(container) {
    var answer = null, streamed = false, waiting = null;
    var handler = function (e) {
      if (e.type === "text") {
        if (!answer) { answer = el("p", "msg assistant"); container.appendChild(answer); }
        answer.textContent += e.text; streamed = true;
      } else if (e.type === "tool_call") {
        container.appendChild(el("p", "tool-call", "→ " + e.call.name + " " + visible(JSON.stringify(e.call.args || {}))));
        answer = null;
      } else if (e.type === "tool_result") {
        container.appendChild(el("p", "tool-result" + (e.result.is_error ? " error" : ""), "← " + e.result.name + " " + JSON.stringify(e.result.output)));
        answer = null;
      } else if (e.type === "suspended") {
        var cid = document.querySelector("#chat input[name=conversation_id]");
        if (cid) cid.value = e.turn.conversation_id;
        container.appendChild(card(e.turn, e.raw_args));
      } else if (e.type === "completed") {
        var c = document.querySelector("#chat input[name=conversation_id]");
        if (c) c.value = e.turn.conversation_id;
        if (!streamed && e.turn.answer) container.appendChild(el("p", "msg assistant", e.turn.answer));
        container.appendChild(el("p", "status", "Done."));
        var a = el("a", "story", "The turn's story"); a.href = "/turns/" + e.turn.turn_id; container.appendChild(a);
      } else if (e.type === "continuing") {
        // The turn stopped before the server's deadline and goes on in the background: say
        // so once, and poll its status until it ends, then render its final event.
        var cc = document.querySelector("#chat input[name=conversation_id]");
        if (cc) cc.value = e.turn.conversation_id;
        if (!waiting) { waiting = el("p", "status continuing", "Still working on it… (continuing in the background)"); container.appendChild(waiting); }
        var handle = handler;
        setTimeout(function () { poll(e.turn.turn_id, handle); }, 3000);
      } else if (e.type === "error") {
        container.appendChild(el("p", "error", "Error: " + (e.text || (e.turn && e.turn.error) || "the turn failed")));
      }
      if (waiting && e.type !== "continuing") { waiting.remove(); waiting = null; }
      container.scrollIntoView({ block: "end" });
    };
    return handler;
  }

  // poll reads a continuing turn's status (GET /turns/{id}/status answers it as a stream
  // event) and hands it to the turn's handler, which polls again while it is continuing.
  function poll(turnID, handle) {
    fetch("/turns/" + encodeURIComponent(turnID) + "/status", { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (res) { return res.json(); })
      .then(function (e) { handle(e); })
      .catch(function () { setTimeout(function () { poll(turnID, handle); }, 5000); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form.approval").forEach(wire);
    var chat = document.getElementById("chat");
    if (!chat) return;
    var log = document.getElementById("log");
    chat.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var msg = chat.message.value.trim();
      if (!msg) return;
      log.appendChild(el("p", "msg user", msg));
      var body = new URLSearchParams(new FormData(chat));
      chat.message.value = "";
      post("/chat", body, "application/x-www-form-urlencoded", turnView(log));
    });
  });
})();
