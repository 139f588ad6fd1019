#!/usr/bin/env python3
"""Passkeys in a real browser: headless Chromium against `tokenmint serve`.

Debian's Chromium, driven through WebDriver (Debian's chromium-driver and
Selenium), with Chrome's virtual authenticators in the place of a security
key or a phone. The page is the server's own `/passkeys/`, the client its
`tokenmint-webauthn.js` on `window.tokenmint`. The server runs with
`--origin http://localhost:PORT --rp-id localhost` (an IP address cannot be
an RP ID). Checks:

  * a CTAP2 authenticator with resident keys and UV: register, sign in with
    and without a username (a discoverable credential), counters rising, the
    access token verified by joserfc with the server's JWKS;
  * an excluded re-registration refused by the authenticator, a sign-up
    over an existing account refused by the server;
  * step-up to an elevated token (scope `elevated`, acr, amr);
  * user verification required: an assertion made without UV (the options
    changed in the page) is refused by the server;
  * a tampered signature refused; a credential the server never registered
    (planted in a fresh authenticator with the account's user handle)
    refused;
  * the credentials and counters survive a server restart;
  * the passkey button of the sign-in form at /oauth/authorize: the browser
    is sent back to the client with a code, redeemed for the account's token;
  * a U2F authenticator cannot make a passkey (resident key required), and
    an authenticator without UV cannot either; each rejection names its reason;
  * PRF and large blobs through the page, their outputs never sent;
  * `--attestation direct`: Chrome's packed attestation, whose certificate
    no root anchors, refused; accepted as `unanchored` with
    `--accept-unanchored-attestation` (and Chrome's credProps result
    reported back as `discoverable`).

The CLI comes from $TOKENMINT (default .build/debug/tokenmint); Chromium and
chromedriver from $CHROMIUM / $CHROMEDRIVER (default Debian's). One line per
check, then `N passed, M failed` (exit 1 if anything failed).
"""
import argparse
import base64
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import warnings

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwt as jose_jwt
from joserfc.jwk import KeySet
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import Credential, VirtualAuthenticatorOptions

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_e2e  # noqa: E402  (one check() and one tally for the run)
from server_e2e import Server, check, free_port, request, b64url  # noqa: E402

warnings.filterwarnings("ignore", message="EdDSA is deprecated")

CLIENT = "passkey-app"


def b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Browser:
    def __init__(self):
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync"):
            options.add_argument(flag)
        service = Service(executable_path=os.environ.get("CHROMEDRIVER", shutil.which("chromedriver") or "/usr/bin/chromedriver"))
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.set_script_timeout(30)

    def open(self, url):
        self.driver.get(url)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.driver.execute_script("return typeof window.tokenmint === 'object'"):
                return True
            time.sleep(0.05)
        return False

    def authenticator(self, protocol="ctap2", transport="internal", resident=True, uv=True):
        for existing in list(getattr(self, "_authenticators", [])):
            self.driver.remove_virtual_authenticator()
        options = VirtualAuthenticatorOptions()
        options.protocol = VirtualAuthenticatorOptions.Protocol.CTAP2 if protocol == "ctap2" else VirtualAuthenticatorOptions.Protocol.U2F
        options.transport = (VirtualAuthenticatorOptions.Transport.INTERNAL if transport == "internal"
                             else VirtualAuthenticatorOptions.Transport.USB)
        options.has_resident_key = resident
        options.has_user_verification = uv
        options.is_user_verified = uv
        options.is_user_consenting = True
        self.driver.add_virtual_authenticator(options)
        self._authenticators = [options]

    def call(self, expression):
        """Runs an async expression in the page: ('ok', value) or ('error', {code, message})."""
        script = ("const done = arguments[arguments.length - 1];"
                  f"Promise.resolve().then(() => {expression})"
                  ".then(value => done(['ok', value]), error => done(['error', {code: error.code ?? error.name, message: String(error.message)}]));")
        return tuple(self.driver.execute_async_script(script))

    def quit(self):
        self.driver.quit()


# Page-side helpers for ceremonies the page's client would never run as is.
ASSERT_WITH = """
(async () => {
  const lib = await import('/passkeys/tokenmint-webauthn.js');
  const client = new lib.TokenMintPasskeys();
  const options = await client.post('/webauthn/authentication/options', %(request)s);
  %(change_options)s
  const credential = await navigator.credentials.get({ publicKey: lib.requestOptionsFromJSON(options) });
  const json = lib.credentialToJSON(credential);
  %(change_credential)s
  return client.post('/webauthn/authentication/verify', { credential: json });
})()
"""


def assert_with(browser, request_body="{}", change_options="", change_credential=""):
    return browser.call(ASSERT_WITH % {"request": request_body, "change_options": change_options, "change_credential": change_credential})


def verify_token(server, token):
    status, _, jwks = request(server, "GET", "/oauth/jwks")
    keys = KeySet.import_key_set(jwks)
    return jose_jwt.decode(token, keys, algorithms=["EdDSA"]).claims


def ceremonies(server, browser, origin):
    check("the page loads and exposes window.tokenmint", browser.open(origin + "/passkeys/"))
    browser.authenticator()
    state, registered = browser.call("window.tokenmint.register('alice')")
    check("register('alice') resolves verified with a credential ID", state == "ok" and registered.get("verified") is True
          and registered.get("credentialId"), registered)
    credentials = browser.driver.get_credentials()
    check("the authenticator holds it as a resident credential", len(credentials) == 1 and credentials[0].is_resident_credential
          and credentials[0].id.rstrip("=") == (registered or {}).get("credentialId"), [c.to_dict() for c in credentials])

    counts = []
    for label, expression in (("signIn('alice')", "window.tokenmint.signIn('alice')"), ("signIn() with a discoverable credential", "window.tokenmint.signIn()")):
        state, answer = browser.call(expression)
        ok = state == "ok" and answer.get("verified") is True and answer.get("username") == "alice"
        check(f"{label} resolves verified as alice", ok, answer)
        if ok:
            counts.append(answer["signCount"])
            claims = verify_token(server, answer["accessToken"])
            check(f"{label}: joserfc verifies the access token with /oauth/jwks (sub alice, iss the server)",
                  claims.get("sub") == "alice" and claims.get("iss") == server.base, claims)
    check("the signature counter rises from one sign-in to the next", len(counts) == 2 and counts[1] > counts[0], counts)
    ceremonies.last_count = counts[-1] if counts else None

    state, error = browser.call("window.tokenmint.register('alice')")
    check("registering again on the same authenticator: refused by excludeCredentials (InvalidStateError)",
          state == "error" and error["code"] == "InvalidStateError", error)
    browser.call("window.tokenmint.signOut()")
    state, error = browser.call("window.tokenmint.register('alice')")
    check("a sign-up over the existing account alice is refused by the server (accountExists)",
          state == "error" and error["code"] == "accountExists", error)

    state, answer = browser.call("window.tokenmint.stepUp()")
    check("stepUp() before signing in rejects with notSignedIn", state == "error" and answer["code"] == "notSignedIn", answer)
    browser.call("window.tokenmint.signIn('alice')")
    state, answer = browser.call("window.tokenmint.stepUp()")
    ok = state == "ok" and answer.get("elevated") is True
    check("stepUp() for the signed-in account resolves to an elevated token", ok, answer)
    if ok:
        claims = verify_token(server, answer["accessToken"])
        check("the elevated token: scope elevated, acr fido2, amr hwk+user, sub alice",
              claims.get("scope") == "elevated" and claims.get("acr") == "urn:tokenmint:acr:fido2" and claims.get("amr") == ["hwk", "user"]
              and claims.get("sub") == "alice", claims)


def refusals(server, browser, origin):
    browser.driver.set_user_verified(False)
    state, error = assert_with(browser, change_options="options.userVerification = 'discouraged';")
    check("an assertion without user verification is refused by the server (UV required)",
          state == "error" and error["code"] == "assertionInvalid" and "UV" in error["message"], error)
    browser.driver.set_user_verified(True)

    state, error = assert_with(browser, change_credential="""
      const bytes = lib.fromBase64url(json.response.signature); const view = new Uint8Array(bytes);
      view[view.length - 1] ^= 1; json.response.signature = lib.toBase64url(bytes);""")
    check("a tampered signature is refused (assertionInvalid)", state == "error" and error["code"] == "assertionInvalid", error)

    state, answer = assert_with(browser)
    check("the same authenticator still signs in after the refusals", state == "ok" and answer.get("verified") is True, answer)
    credentials = browser.driver.get_credentials()
    handle = credentials[0]._user_handle if credentials else None

    # A fresh authenticator holding a credential the server never saw, for alice's user handle.
    browser.authenticator()
    key = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    browser.driver.add_credential(Credential.create_resident_credential(secrets.token_bytes(32), "localhost", handle or b"\x00" * 32,
                                                                       pkcs8, 0))
    state, error = browser.call("window.tokenmint.signIn()")
    check("a fresh authenticator's unregistered credential is refused (wrongAccount)", state == "error" and error["code"] == "wrongAccount", error)

    for label, kwargs, expected in (
        ("a U2F authenticator cannot make a passkey (no resident keys)", {"protocol": "u2f", "transport": "usb", "resident": False, "uv": False},
         "NotAllowedError"),
        ("an authenticator without user verification cannot make a passkey", {"resident": True, "uv": False}, "NotAllowedError"),
    ):
        browser.authenticator(**kwargs)
        state, error = browser.call("window.tokenmint.register('bob-' + Math.random().toString(36).slice(2))")
        check(label + f" ({expected})", state == "error" and error["code"] == expected, error)


def authorize(server, browser, origin):
    """The passkey button on the authorization endpoint's sign-in form."""
    browser.authenticator()
    browser.open(origin + "/passkeys/")
    state, _ = browser.call("window.tokenmint.register('carol')")
    check("carol registers a passkey for the authorization-endpoint sign-in", state == "ok")
    verifier = b64url(secrets.token_bytes(32))
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    redirect = origin + "/healthz"
    query = urllib.parse.urlencode({"response_type": "code", "client_id": CLIENT, "redirect_uri": redirect, "code_challenge": challenge,
                                    "code_challenge_method": "S256", "state": "passkey-state"})
    browser.driver.get(origin + "/oauth/authorize?" + query)
    deadline = time.time() + 10
    button = None
    while time.time() < deadline:
        found = browser.driver.find_elements("id", "passkey-sign-in")
        if found and found[0].is_displayed():
            button = found[0]
            break
        time.sleep(0.05)
    check("the sign-in form shows a passkey button", button is not None)
    if button is None:
        return
    button.click()
    deadline = time.time() + 15
    while time.time() < deadline and not browser.driver.current_url.startswith(redirect):
        time.sleep(0.05)
    url = browser.driver.current_url
    parameters = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    check("the browser is sent back to the client with a code, the state and the issuer",
          url.startswith(redirect) and parameters.get("code") and parameters.get("state") == "passkey-state"
          and parameters.get("iss") == server.base, url)
    status, _, answer = server_e2e.form_post(server, "/oauth/token", {
        "grant_type": "authorization_code", "code": parameters.get("code", ""), "redirect_uri": redirect, "code_verifier": verifier,
        "client_id": CLIENT})
    ok = status == 200 and isinstance(answer, dict) and "access_token" in answer
    check("the code is redeemed for carol's token", ok and verify_token(server, answer["access_token"]).get("sub") == "carol", answer)


def extensions(server, browser, origin):
    """PRF and large blobs through the page's client, on a CTAP 2.1 virtual
    authenticator with both (set up through the DevTools protocol): the PRF
    gives the same 32 bytes for the same salt and others for another, a blob
    written is read back, and neither output ever reaches the server."""
    driver = browser.driver
    for _ in getattr(browser, "_authenticators", []):
        driver.remove_virtual_authenticator()
    browser._authenticators = []
    driver.execute_cdp_cmd("WebAuthn.enable", {"enableUI": False})
    added = driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "ctap2Version": "ctap2_1", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True, "hasLargeBlob": True, "hasPrf": True}})
    check("the page loads again", browser.open(origin + "/passkeys/"))
    # Every request body the page sends, to show the private outputs stay in the page.
    browser.driver.execute_script("""
        window.sentBodies = [];
        const original = window.fetch;
        window.fetch = (url, init) => { window.sentBodies.push(String(init?.body ?? '')); return original(url, init); };""")
    state, registered = browser.call("window.tokenmint.register('pria', {prf: true, largeBlob: true})")
    check("register('pria', {prf, largeBlob}): verified, PRF enabled, large blobs supported",
          state == "ok" and registered.get("verified") is True and registered.get("prfEnabled") is True and registered.get("largeBlobSupported") is True,
          registered)
    outputs = []
    for salt in ("salt one", "salt one", "salt two"):
        state, answer = browser.call(f"window.tokenmint.signIn('pria', {{prf: '{salt}'}})")
        outputs.append(answer.get("prf") if state == "ok" else None)
    check("the PRF: 32 bytes, the same for the same salt, another for another salt",
          all(outputs) and len(b64decode(outputs[0])) == 32 and outputs[0] == outputs[1] and outputs[0] != outputs[2], outputs)
    state, written = browser.call("window.tokenmint.signIn('pria', {largeBlobWrite: 'a large blob for pria'})")
    check("a large blob is written at sign-in", state == "ok" and written.get("largeBlobWritten") is True, written)
    state, read = browser.call("window.tokenmint.signIn('pria', {largeBlobRead: true})")
    check("and read back whole at the next", state == "ok" and read.get("largeBlob") and b64decode(read["largeBlob"]) == b"a large blob for pria",
          read)
    sent = browser.driver.execute_script("return window.sentBodies")
    leaked = [o for o in outputs if o and any(o in body for body in sent)] + [b for b in ["YSBsYXJnZSBibG9iIGZvciBwcmlh"] if any(b in body for body in sent)]
    check(f"none of the {len(sent)} requests to the server carried a PRF output or the blob", len(sent) >= 8 and not leaked, leaked)
    driver.execute_cdp_cmd("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": added["authenticatorId"]})


REGISTER_RAW = """
(async () => {
  const lib = await import('/passkeys/tokenmint-webauthn.js');
  const client = new lib.TokenMintPasskeys();
  const options = await client.post('/webauthn/registration/options', {username: %(username)s});
  const credential = await navigator.credentials.create({ publicKey: lib.creationOptionsFromJSON(options) });
  const json = lib.credentialToJSON(credential);
  let answer;
  try { answer = await client.post('/webauthn/registration/verify', { username: %(username)s, credential: json }); }
  catch (error) { answer = {code: error.code ?? error.name, message: String(error.message)}; }
  return {attestation: options.attestation, extensions: options.extensions, results: json.clientExtensionResults,
          attestationObject: json.response.attestationObject, answer};
})()
"""


def direct_attestation(origin_port):
    """`tokenmint serve --attestation direct`: the options ask for it, and
    Chrome's authenticator answers with a packed attestation whose
    certificate (self-signed, made afresh for each registration) no root
    anchors: refused. With `--accept-unanchored-attestation` the same
    registration lands, reported as `unanchored`, and signs in."""
    from fido2 import cbor as fido2_cbor
    from cryptography import x509
    origin = f"http://localhost:{origin_port}"
    arguments = ["--origin", origin, "--rp-id", "localhost", "--attestation", "direct"]
    with tempfile.TemporaryDirectory(prefix="tokenmint-direct-") as state:
        for accept in (False, True):
            server = Server(state, origin_port, arguments + (["--accept-unanchored-attestation"] if accept else []))
            server.start()
            browser = Browser()
            try:
                browser.authenticator()
                check(f"a direct-attestation server's page loads{' (accepting unanchored attestations)' if accept else ''}",
                      browser.open(origin + "/passkeys/"))
                outcome, got = browser.call(REGISTER_RAW % {"username": json.dumps("dora")})
                answer = got.get("answer", {}) if outcome == "ok" else got
                statement, subject = {}, ""
                if outcome == "ok":
                    decoded = fido2_cbor.decode(b64decode(got["attestationObject"]))
                    statement = decoded.get("attStmt", {}) if decoded.get("fmt") == "packed" else {}
                    if statement.get("x5c"):
                        subject = x509.load_der_x509_certificate(statement["x5c"][0]).subject.rfc4514_string()
                if not accept:
                    check("its options ask for direct attestation and credProps; Chrome reports credProps.rk",
                          outcome == "ok" and got["attestation"] == "direct" and got["extensions"] == {"credProps": True}
                          and got["results"].get("credProps", {}).get("rk") is True, got)
                    check(f"Chrome sends a packed attestation with a certificate ({subject[:48]}), which no root anchors: refused",
                          bool(statement.get("x5c")) and answer.get("code") == "registrationInvalid" and "root" in answer.get("message", ""),
                          answer)
                else:
                    check("with --accept-unanchored-attestation it lands: packed, attestationTrust unanchored, discoverable",
                          answer.get("verified") is True and answer.get("attestationFormat") == "packed"
                          and answer.get("attestationTrust") == "unanchored" and answer.get("discoverable") is True, answer)
                    outcome, signed = browser.call("window.tokenmint.signIn('dora')")
                    check("and dora signs in with it", outcome == "ok" and signed.get("verified") is True, signed)
            finally:
                browser.quit()
                server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tokenmint-passkeys-") as state:
        port = free_port()
        origin = f"http://localhost:{port}"
        result = subprocess.run([server_e2e.TOKENMINT, "serve", "client", "add", "--state", state, "--id", CLIENT, "--redirect-uri",
                                 origin + "/healthz"], capture_output=True, text=True)
        check("serve client add registers the public client", result.returncode == 0, result.stderr[-500:])
        arguments = ["--origin", origin, "--rp-id", "localhost"]
        server = Server(state, port, arguments)
        server.start()
        browser = Browser()
        try:
            ceremonies(server, browser, origin)
            check("SIGTERM: the server exits 0", server.stop() == 0)
            server = Server(state, port, arguments)
            server.start()
            outcome, answer = browser.call("window.tokenmint.signIn('alice')")
            check("after a server restart alice signs in with the same passkey, the counter still rising",
                  outcome == "ok" and ceremonies.last_count is not None and answer.get("signCount", 0) > ceremonies.last_count, answer)
            refusals(server, browser, origin)
            authorize(server, browser, origin)
            extensions(server, browser, origin)
        finally:
            browser.quit()
            server.stop()
    direct_attestation(free_port())
    print(f"{server_e2e.passed} passed, {server_e2e.failed} failed")
    return 1 if server_e2e.failed else 0


if __name__ == "__main__":
    sys.exit(main())
