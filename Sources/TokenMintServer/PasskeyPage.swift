#if Server
import TokenMintCore
import Hummingbird
import HTTPTypes

/// The browser side of passkeys, served by `tokenmint serve`: the
/// dependency-free ES module `tokenmint-webauthn.js`, the page at
/// `/passkeys/` that puts it on `window.tokenmint`, and the script that
/// wires the passkey button of the sign-in form at `/oauth/authorize`.
enum PasskeyPage {
    static func script(_ text: String) -> Response {
        Response(status: .ok, headers: HTTPMessages.browserHeaders(contentType: "text/javascript; charset=utf-8"), body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func page() -> Response {
        Response(status: .ok, headers: HTTPMessages.browserHeaders(contentType: "text/html; charset=utf-8"), body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    static let html = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Passkeys</title>
        <script type="module" src="/passkeys/passkeys.js"></script>
        <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.4}\
        input,button{padding:.5rem;margin:.25rem 0}pre{background:#f4f4f4;padding:.5rem;white-space:pre-wrap;word-break:break-all}\
        .error{color:#b00020}</style></head>
        <body>
        <h1>Passkeys</h1>
        <p>Create a passkey for a username, sign in with it, and step up to an elevated token
        (the touch a refund asks for). Each answer is shown below as the server gave it.</p>
        <form id="passkeys" action="#">
        <label for="username">Username</label><br>
        <input id="username" name="username" autocomplete="username webauthn" maxlength="64">
        <p>
        <button type="button" id="register">Create a passkey</button>
        <button type="button" id="sign-in">Sign in</button>
        <button type="button" id="sign-in-any">Sign in with any passkey</button>
        <button type="button" id="step-up">Step up</button>
        <button type="button" id="sign-out">Sign out</button>
        </p>
        </form>
        <p id="status" role="status">Not signed in.</p>
        <pre id="result"></pre>
        <noscript><p class="error">Passkeys need JavaScript.</p></noscript>
        </body></html>

        """

    /// `passkeys.js`: `window.tokenmint` on the passkey page, and the
    /// passkey button on the sign-in form of the authorization endpoint.
    static let pageScript = #"""
        import { TokenMintPasskeys, PasskeyError, requestOptionsFromJSON, credentialToJSON } from '/passkeys/tokenmint-webauthn.js';

        const client = new TokenMintPasskeys();
        window.tokenmint = {
          register: (username, options) => client.register(username, options),
          signIn: (username, options) => client.signIn(username, options),
          stepUp: () => client.stepUp(),
          signOut: () => client.signOut(),
          get session() { return client.session; },
          PasskeyError,
        };

        function show(outcome, ok) {
          const status = document.getElementById('status');
          const result = document.getElementById('result');
          status.className = ok ? '' : 'error';
          status.textContent = ok ? (client.session ? `Signed in as ${client.session.username}.` : 'Done.') : String(outcome.message ?? outcome);
          result.textContent = ok ? JSON.stringify(outcome, null, 1) : '';
        }

        function wire(id, action) {
          const button = document.getElementById(id);
          if (!button) return;
          button.addEventListener('click', async () => {
            try { show(await action(), true); } catch (error) { show(error, false); }
          });
        }

        const field = () => document.getElementById('username').value.trim();
        wire('register', () => client.register(field()));
        wire('sign-in', () => client.signIn(field() || undefined));
        wire('sign-in-any', () => client.signIn());
        wire('step-up', () => client.stepUp());
        wire('sign-out', async () => { client.signOut(); return { signedOut: true }; });

        // The sign-in form of /oauth/authorize: an assertion instead of a password.
        const form = document.getElementById('authorize');
        const passkeyButton = document.getElementById('passkey-sign-in');
        if (form && passkeyButton) {
          passkeyButton.hidden = false;
          passkeyButton.addEventListener('click', async () => {
            const alert = document.getElementById('passkey-error');
            try {
              const options = await client.post('/webauthn/authentication/options', {});
              const credential = await navigator.credentials.get({ publicKey: requestOptionsFromJSON(options) });
              form.elements.passkey.value = JSON.stringify(credentialToJSON(credential));
              form.submit();
            } catch (error) {
              alert.textContent = error.message;
            }
          });
        }

        """#

    /// `tokenmint-webauthn.js`: base64url ↔ ArrayBuffer, options JSON ↔
    /// `navigator.credentials`, `PublicKeyCredential.toJSON()` where the
    /// browser has it, and a client of the server's `/webauthn/` routes.
    static let library = #"""
        // tokenmint-webauthn.js: passkeys against a TokenMint relying party.
        // No dependencies and no build step: an ES module for any current browser.

        /** An error naming its reason: `code` is the server's error code, a
         * DOMException name (NotAllowedError, InvalidStateError, …) or `network`. */
        export class PasskeyError extends Error {
          constructor(code, message) {
            super(`${code}: ${message}`);
            this.name = 'PasskeyError';
            this.code = code;
          }
        }

        /** ArrayBuffer or view → base64url without padding. */
        export function toBase64url(buffer) {
          const bytes = buffer instanceof ArrayBuffer ? new Uint8Array(buffer) : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
          let text = '';
          for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
          return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
        }

        /** base64url (padding optional) → ArrayBuffer; anything else throws. */
        export function fromBase64url(text) {
          if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) throw new PasskeyError('malformed', 'not base64url');
          const plain = text.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
          const binary = atob(plain + '==='.slice((plain.length + 3) % 4));
          const bytes = new Uint8Array(binary.length);
          for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
          return bytes.buffer;
        }

        const descriptors = (list) => (list ?? []).map((item) => ({ ...item, id: fromBase64url(item.id) }));

        /** PublicKeyCredentialCreationOptionsJSON → options for navigator.credentials.create. */
        export function creationOptionsFromJSON(json) {
          if (typeof PublicKeyCredential !== 'undefined' && PublicKeyCredential.parseCreationOptionsFromJSON) {
            return PublicKeyCredential.parseCreationOptionsFromJSON(json);
          }
          return { ...json, challenge: fromBase64url(json.challenge), user: { ...json.user, id: fromBase64url(json.user.id) },
                   excludeCredentials: descriptors(json.excludeCredentials) };
        }

        /** PublicKeyCredentialRequestOptionsJSON → options for navigator.credentials.get. */
        export function requestOptionsFromJSON(json) {
          if (typeof PublicKeyCredential !== 'undefined' && PublicKeyCredential.parseRequestOptionsFromJSON) {
            return PublicKeyCredential.parseRequestOptionsFromJSON(json);
          }
          return { ...json, challenge: fromBase64url(json.challenge), allowCredentials: descriptors(json.allowCredentials) };
        }

        /** A PublicKeyCredential → its JSON form (WebAuthn L3 toJSON), every byte string base64url. */
        export function credentialToJSON(credential) {
          if (typeof credential.toJSON === 'function') return credential.toJSON();
          const response = credential.response;
          const json = {
            id: credential.id, rawId: toBase64url(credential.rawId), type: credential.type,
            authenticatorAttachment: credential.authenticatorAttachment ?? null,
            clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
            response: { clientDataJSON: toBase64url(response.clientDataJSON) },
          };
          if (response.attestationObject) {
            json.response.attestationObject = toBase64url(response.attestationObject);
            json.response.transports = response.getTransports ? response.getTransports() : [];
          } else {
            json.response.authenticatorData = toBase64url(response.authenticatorData);
            json.response.signature = toBase64url(response.signature);
            json.response.userHandle = response.userHandle ? toBase64url(response.userHandle) : null;
          }
          return json;
        }

        /** A string (UTF-8) or bytes → a Uint8Array. */
        function bytesOf(value) {
          if (typeof value === 'string') return new TextEncoder().encode(value);
          if (value instanceof ArrayBuffer) return new Uint8Array(value);
          if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
          throw new PasskeyError('badRequest', 'a PRF salt or large blob is a string or bytes');
        }

        /** The credential's JSON without the outputs that belong to the page
         * alone: PRF results (key material) and a large blob's contents. */
        function privateResultsRemoved(json) {
          const results = { ...(json.clientExtensionResults ?? {}) };
          if (results.prf) results.prf = { enabled: results.prf.enabled };
          if (results.largeBlob) results.largeBlob = { supported: results.largeBlob.supported, written: results.largeBlob.written };
          for (const name of ['prf', 'largeBlob']) {
            if (results[name]) for (const key of Object.keys(results[name])) if (results[name][key] === undefined) delete results[name][key];
          }
          return { ...json, clientExtensionResults: results };
        }

        async function browserCall(call) {
          if (typeof navigator === 'undefined' || !navigator.credentials || typeof PublicKeyCredential === 'undefined') {
            throw new PasskeyError('NotSupportedError', 'this browser has no WebAuthn');
          }
          try {
            const credential = await call();
            if (!credential) throw new PasskeyError('NotAllowedError', 'no credential was returned');
            return credential;
          } catch (error) {
            if (error instanceof PasskeyError) throw error;
            throw new PasskeyError(error?.name ?? 'Error', error?.message ?? String(error));
          }
        }

        /** A client of a TokenMint server's /webauthn/ routes. */
        export class TokenMintPasskeys {
          /** `base`: the server's URL ('' for this origin). */
          constructor({ base = '' } = {}) {
            this.base = base;
            /** After a sign-in: { username, accessToken, expiresAt, signCount }. */
            this.session = null;
          }

          /** POSTs JSON and returns the JSON answer, or throws the server's error. */
          async post(path, body, bearer) {
            const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
            if (bearer) headers.Authorization = `Bearer ${bearer}`;
            let response;
            try {
              response = await fetch(this.base + path, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'same-origin' });
            } catch (error) {
              throw new PasskeyError('network', `the server cannot be reached: ${error.message}`);
            }
            let data = null;
            try { data = await response.json(); } catch { data = null; }
            if (!response.ok) {
              throw new PasskeyError(data?.error ?? `http${response.status}`, data?.message ?? `the server answered ${response.status}`);
            }
            return data;
          }

          /** Creates a passkey for `username`: a new account, or an existing one
           * whose owner proves it (signed in with a passkey in the last five
           * minutes, or `password` given). `prf: true` asks for the PRF
           * extension, `largeBlob: true` for large-blob storage. Resolves to
           * { verified: true, credentialId, username, prfEnabled, largeBlobSupported, … }. */
          async register(username, { displayName, password, prf, largeBlob } = {}) {
            if (typeof username !== 'string' || username.length === 0) throw new PasskeyError('badRequest', 'a username is needed');
            const bearer = this.session?.username === username ? this.session.accessToken : undefined;
            const request = { username };
            if (displayName) request.displayName = displayName;
            if (password) request.password = password;
            const options = await this.post('/webauthn/registration/options', request, bearer);
            const publicKey = creationOptionsFromJSON(options);
            const extensions = { ...(publicKey.extensions ?? {}) };
            if (prf) extensions.prf = {};
            if (largeBlob) extensions.largeBlob = { support: 'required' };
            publicKey.extensions = extensions;
            const credential = await browserCall(() => navigator.credentials.create({ publicKey }));
            const local = credential.getClientExtensionResults ? credential.getClientExtensionResults() : {};
            const result = await this.post('/webauthn/registration/verify', { username, credential: privateResultsRemoved(credentialToJSON(credential)) }, bearer);
            return { ...result, prfEnabled: local.prf?.enabled === true, largeBlobSupported: local.largeBlob?.supported === true };
          }

          /** Signs in with a passkey of `username`, or with any discoverable
           * passkey when no username is given. `prf` (a string or bytes)
           * evaluates the credential's PRF with that salt; `largeBlobWrite`
           * (a string or bytes) stores a large blob, `largeBlobRead: true`
           * reads it. Those outputs stay in the page: they are never sent to
           * the server. Resolves to { verified: true, username, signCount,
           * accessToken, prf, largeBlob, largeBlobWritten, … } (byte strings
           * as base64url). */
          async signIn(username, { prf, largeBlobWrite, largeBlobRead } = {}) {
            const options = await this.post('/webauthn/authentication/options', username ? { username } : {});
            const publicKey = requestOptionsFromJSON(options);
            const extensions = { ...(publicKey.extensions ?? {}) };
            if (prf !== undefined) extensions.prf = { eval: { first: bytesOf(prf) } };
            if (largeBlobWrite !== undefined) extensions.largeBlob = { write: bytesOf(largeBlobWrite) };
            else if (largeBlobRead) extensions.largeBlob = { read: true };
            publicKey.extensions = extensions;
            const credential = await browserCall(() => navigator.credentials.get({ publicKey }));
            const local = credential.getClientExtensionResults ? credential.getClientExtensionResults() : {};
            const result = await this.post('/webauthn/authentication/verify', { credential: privateResultsRemoved(credentialToJSON(credential)) });
            this.session = { username: result.username, accessToken: result.accessToken, expiresAt: result.expiresAt, signCount: result.signCount };
            const answer = { ...result };
            if (local.prf?.results?.first) answer.prf = toBase64url(local.prf.results.first);
            if (local.largeBlob?.blob) answer.largeBlob = toBase64url(local.largeBlob.blob);
            if (local.largeBlob && 'written' in local.largeBlob) answer.largeBlobWritten = local.largeBlob.written === true;
            return answer;
          }

          /** Steps the signed-in account up: resolves to { verified: true, elevated: true, accessToken, … }. */
          async stepUp() {
            if (!this.session) throw new PasskeyError('notSignedIn', 'sign in first');
            const bearer = this.session.accessToken;
            const options = await this.post('/webauthn/step-up/options', {}, bearer);
            const credential = await browserCall(() => navigator.credentials.get({ publicKey: requestOptionsFromJSON(options) }));
            return this.post('/webauthn/step-up/verify', { credential: credentialToJSON(credential) }, bearer);
          }

          /** Forgets the session. */
          signOut() { this.session = null; }
        }

        """#
}
#endif
