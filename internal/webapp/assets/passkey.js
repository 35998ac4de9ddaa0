// Passkeys in the browser (docs/ARCHITECTURE.md §13): loaded on the sign-in and settings
// pages only. The server's begin routes answer WebAuthn options in their JSON form (binary
// fields in unpadded base64url); this script turns them into ArrayBuffers for
// navigator.credentials, and the credential it gets back into the same JSON form for the
// finish routes. Every failure is said in words next to the button; nothing is retried alone.
(function () {
  'use strict';

  function toBytes(s) {
    var b64 = s.replace(/-/g, '+').replace(/_/g, '/');
    while (b64.length % 4) b64 += '=';
    var bin = atob(b64);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }

  function toText(buf) {
    if (!buf) return undefined;
    var bytes = new Uint8Array(buf);
    var bin = '';
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function descriptors(list) {
    return (list || []).map(function (d) {
      return Object.assign({}, d, { id: toBytes(d.id) });
    });
  }

  function csrf() {
    var m = document.querySelector('meta[name="csrf-token"]');
    return m ? m.content : '';
  }

  // post sends body as JSON and returns the answer's JSON; a refusal throws its words.
  async function post(url, body) {
    var res;
    try {
      res = await fetch(url, {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf() },
        body: body === undefined ? '{}' : JSON.stringify(body)
      });
    } catch (e) {
      throw new Error('Steward could not be reached. Check your connection and try again.');
    }
    var data = null;
    try { data = await res.json(); } catch (e) { /* not JSON: said below */ }
    if (!res.ok) {
      throw new Error((data && data.error) || ('The server refused (' + res.status + '). Reload the page and try again.'));
    }
    return data;
  }

  // said words a browser's WebAuthn error for a person.
  function said(e) {
    switch (e && e.name) {
      case 'NotAllowedError':
        return 'The passkey request was cancelled or timed out. Nothing was changed.';
      case 'InvalidStateError':
        return 'This device already holds a passkey for Steward.';
      case 'SecurityError':
        return 'Passkeys do not work at this address. Open Steward at its usual address and try again.';
      case 'NotSupportedError':
        return 'This device cannot make a passkey Steward accepts.';
    }
    return (e && e.message) || 'Something went wrong. Try again.';
  }

  function credentialJSON(cred) {
    var r = cred.response;
    var out = {
      id: cred.id, rawId: toText(cred.rawId), type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: toText(r.clientDataJSON) }
    };
    if (r.attestationObject) {
      out.response.attestationObject = toText(r.attestationObject);
      out.response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      out.response.authenticatorData = toText(r.authenticatorData);
      out.response.signature = toText(r.signature);
      out.response.userHandle = toText(r.userHandle);
    }
    return out;
  }

  function supported(status) {
    if (window.PublicKeyCredential && navigator.credentials) return true;
    status.textContent = 'This browser does not support passkeys.';
    return false;
  }

  function busy(button, status, on, text) {
    button.disabled = on;
    button.setAttribute('aria-busy', on ? 'true' : 'false');
    status.classList.remove('error');
    status.textContent = text || '';
  }

  function failed(button, status, e) {
    busy(button, status, false);
    status.classList.add('error');
    status.textContent = said(e);
  }

  // Sign in with a passkey (the sign-in page).
  var signin = document.getElementById('passkey-signin');
  if (signin) {
    var signinStatus = signin.parentNode.querySelector('.passkey-status');
    signin.disabled = !supported(signinStatus);
    signin.addEventListener('click', async function () {
      if (!supported(signinStatus)) return;
      busy(signin, signinStatus, true, 'Waiting for your passkey…');
      try {
        var opts = await post('/signin/passkey/begin');
        var pk = opts.publicKey;
        pk.challenge = toBytes(pk.challenge);
        pk.allowCredentials = descriptors(pk.allowCredentials);
        var cred = await navigator.credentials.get({ publicKey: pk });
        busy(signin, signinStatus, true, 'Signing in…');
        var done = await post('/signin/passkey/finish', credentialJSON(cred));
        window.location.assign(done.redirect || '/');
      } catch (e) {
        failed(signin, signinStatus, e);
      }
    });
  }

  // Add a passkey (Settings).
  var register = document.getElementById('passkey-register');
  if (register) {
    var button = register.querySelector('button[type="submit"]');
    var status = register.querySelector('.passkey-status');
    button.disabled = !supported(status);
    register.addEventListener('submit', async function (ev) {
      ev.preventDefault();
      if (!supported(status)) return;
      var name = register.elements.name.value.trim();
      if (!name) {
        failed(button, status, new Error('Give the passkey a name first, such as “my phone”.'));
        return;
      }
      busy(button, status, true, 'Follow your browser’s steps to make the passkey…');
      try {
        var opts = await post('/settings/passkeys/begin');
        var pk = opts.publicKey;
        pk.challenge = toBytes(pk.challenge);
        pk.user = Object.assign({}, pk.user, { id: toBytes(pk.user.id) });
        pk.excludeCredentials = descriptors(pk.excludeCredentials);
        var cred = await navigator.credentials.create({ publicKey: pk });
        busy(button, status, true, 'Saving…');
        var done = await post('/settings/passkeys/finish', { name: name, credential: credentialJSON(cred) });
        window.location.assign(done.redirect || '/settings');
        window.location.reload();
      } catch (e) {
        failed(button, status, e);
      }
    });
  }
})();
