#!/usr/bin/env python3
"""`tokenmint serve`'s OAuth code flow driven by Authlib, over real loopback HTTP.

An independent OAuth client (Authlib's requests `OAuth2Session`, a public
client: PKCE S256, `client_id` in the body) and a plain HTTP client acting as
the browser (it reads the sign-in form with the standard library's HTML
parser, posts it, and does not follow redirects) run the whole flow against
a fresh `tokenmint serve`; joserfc verifies the access tokens with the
server's JWKS. Checks:

  * `serve client add` registers a public client, `serve account add` an
    account (the password from standard input only);
  * RFC 8414 metadata lists the authorization and revocation endpoints,
    S256, the three grants and `none`;
  * the sign-in form (security headers, hidden request parameters), a wrong
    password (401, no redirect), the code in the redirect with the state;
  * Authlib's token request with the verifier; the RFC 9068 access token
    (`typ` at+jwt, `iss`, `sub` = username, `client_id`, scope);
  * refresh rotation, a reused refresh token refused and its family revoked
    (the newest token fails too), RFC 7009 revocation;
  * refusals: a reused code, a PKCE mismatch, a wrong redirect URI and an
    unknown client (400, no Location), no PKCE or the plain method (sent back
    to the client), a reflected `state` escaped in the HTML;
  * DPoP (RFC 9449), the proofs made by joserfc (ES256 and EdDSA): a desk's
    client_credentials token bound to the proof's key (token_type DPoP,
    cnf.jkt = the RFC 7638 thumbprint), taken by a resource route only as
    `Authorization: DPoP` with a fresh proof for the request (a replayed
    proof, Bearer, another key, a wrong htm or htu, no ath: 401; an unbound
    token under the DPoP scheme: 401); token-endpoint proofs with a wrong htu
    or replayed (400 invalid_dpop_proof); the code flow with a proof binds
    the refresh family, which rotates only with a proof of the same key (no
    proof or another key: invalid_grant, and the refresh token not spent).

The CLI comes from $TOKENMINT (default .build/debug/tokenmint). One line per
check, then `N passed, M failed` (exit 1 if anything failed).
"""
import argparse
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
from html.parser import HTMLParser

# Authlib refuses plain http unless told (older versions even for loopback).
os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")

import requests  # noqa: E402
from authlib.common.security import generate_token  # noqa: E402
from authlib.integrations.requests_client import OAuth2Session, OAuthError  # noqa: E402
from joserfc import jws as jose_jws  # noqa: E402
from joserfc import jwt as jose_jwt  # noqa: E402
from joserfc.jwk import ECKey, KeySet, OKPKey  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_e2e  # noqa: E402  (one check() and one tally for the run)
from server_e2e import DESK_SECRET, TOKENMINT, Server, add_client, check, free_port, request  # noqa: E402

CLIENT_ID = "cli-app"
USERNAME = "alice"
PASSWORD = "correct horse battery staple"
SCOPE = "profile"

def s256(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


class SignInForm(HTMLParser):
    """The first form of a page: its action, method and named inputs."""

    def __init__(self, html):
        super().__init__()
        self.action, self.method, self.fields, self.forms = None, None, {}, 0
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self.forms += 1
            if self.forms == 1:
                self.action, self.method = attributes.get("action"), (attributes.get("method") or "get").lower()
        elif tag == "input" and self.forms == 1 and attributes.get("name"):
            self.fields[attributes["name"]] = attributes.get("value") or ""


def query(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, keep_blank_values=True))


def session(redirect_uri):
    return OAuth2Session(CLIENT_ID, redirect_uri=redirect_uri, scope=SCOPE, code_challenge_method="S256",
                         token_endpoint_auth_method="none", revocation_endpoint_auth_method="none")


def oauth_error(call):
    """The OAuth error code a call raises (None if it succeeds)."""
    try:
        call()
    except OAuthError as error:
        return error.error
    return None


class Browser:
    """A user agent that shows the form, fills it in and stops at redirects."""

    def __init__(self):
        self.http = requests.Session()

    def open(self, url):
        return self.http.get(url, allow_redirects=False, timeout=30)

    def submit(self, page_url, page, username=USERNAME, password=PASSWORD):
        form = SignInForm(page.text)
        fields = dict(form.fields, username=username, password=password)
        return self.http.post(urllib.parse.urljoin(page_url, form.action), data=fields, allow_redirects=False, timeout=30)


def sign_in(server, client, verifier, browser):
    """The authorization URL Authlib makes, the form, the credentials: the redirect's Location."""
    url, _ = client.create_authorization_url(server.base + "/oauth/authorize", code_verifier=verifier)
    page = browser.open(url)
    response = browser.submit(url, page)
    return response.headers.get("Location", "")


def setup(state, redirect_uri):
    result = subprocess.run([TOKENMINT, "serve", "client", "add", "--state", state, "--id", CLIENT_ID, "--redirect-uri", redirect_uri,
                             "--grant", "authorization_code", "--grant", "refresh_token"], capture_output=True, text=True)
    try:
        added = json.loads(result.stdout)
    except ValueError:
        added = {}
    check("serve client add registers a public client for the code and refresh grants",
          result.returncode == 0 and added.get("confidential") is False and added.get("grants") == ["authorization_code", "refresh_token"],
          (result.stdout, result.stderr[-500:]))
    result = subprocess.run([TOKENMINT, "serve", "account", "add", "--state", state, "--username", USERNAME, "--password-stdin"],
                            input=PASSWORD + "\n", capture_output=True, text=True)
    try:
        added = json.loads(result.stdout)
    except ValueError:
        added = {}
    check("serve account add prints the account", result.returncode == 0 and added == {"username": USERNAME}, (result.stdout, result.stderr[-500:]))
    result = subprocess.run([TOKENMINT, "serve", "account", "add", "--state", state, "--username", "bob"], input=PASSWORD + "\n",
                            capture_output=True, text=True)
    check("serve account add without --password-stdin is refused", result.returncode != 0, result.stdout)
    result = subprocess.run([TOKENMINT, "serve", "account", "add", "--state", state, "--username", "bob", "--password-stdin"], input="short\n",
                            capture_output=True, text=True)
    check("serve account add refuses a password under 8 bytes", result.returncode != 0, result.stdout)


def verify(server, token, jwks):
    try:
        verified = jose_jwt.decode(token, KeySet.import_key_set(jwks), algorithms=["EdDSA"])
    except Exception as error:  # noqa: BLE001 - any failure to verify is a failed check
        return False, str(error)
    claims = verified.claims
    ok = verified.header.get("typ") == "at+jwt" and claims.get("iss") == server.base and claims.get("sub") == USERNAME \
        and claims.get("client_id") == CLIENT_ID and claims.get("scope") == SCOPE and claims.get("exp", 0) > time.time()
    return ok, (verified.header, claims)


def flow(server, redirect_uri):
    token_url, revoke_url = server.base + "/oauth/token", server.base + "/oauth/revoke"
    metadata = requests.get(server.base + "/.well-known/oauth-authorization-server", timeout=30).json()
    check("metadata: authorization and revocation endpoints, S256, three grants, auth method none",
          metadata.get("authorization_endpoint") == server.base + "/oauth/authorize" and metadata.get("revocation_endpoint") == revoke_url
          and metadata.get("code_challenge_methods_supported") == ["S256"] and metadata.get("response_types_supported") == ["code"]
          and set(metadata.get("grant_types_supported", [])) == {"authorization_code", "refresh_token", "client_credentials"}
          and "none" in metadata.get("token_endpoint_auth_methods_supported", []), metadata)
    jwks = requests.get(server.base + "/oauth/jwks", timeout=30).json()

    client = session(redirect_uri)
    verifier = generate_token(64)
    url, state = client.create_authorization_url(server.base + "/oauth/authorize", code_verifier=verifier)
    parameters = query(url)
    check("Authlib's authorization URL carries PKCE S256", parameters.get("code_challenge_method") == "S256"
          and parameters.get("code_challenge") == s256(verifier) and parameters.get("state") == state, url)

    browser = Browser()
    page = browser.open(url)
    form = SignInForm(page.text)
    headers = page.headers
    check("GET /oauth/authorize: a sign-in form (200, HTML, CSP, X-Frame-Options DENY, no-store)",
          page.status_code == 200 and headers.get("Content-Type", "").startswith("text/html")
          and "default-src 'none'" in headers.get("Content-Security-Policy", "") and headers.get("X-Frame-Options") == "DENY"
          and headers.get("Cache-Control") == "no-store", (page.status_code, dict(headers)))
    check("the form posts the request back with username and password fields",
          form.method == "post" and form.fields.get("state") == state and form.fields.get("code_challenge") == s256(verifier)
          and form.fields.get("client_id") == CLIENT_ID and "username" in form.fields and "password" in form.fields, form.fields)

    wrong = browser.submit(url, page, password="not the password")
    check("a wrong password: the form again (401), no redirect", wrong.status_code == 401 and "Location" not in wrong.headers
          and "password" in SignInForm(wrong.text).fields, wrong.status_code)

    response = browser.submit(url, page)
    location = response.headers.get("Location", "")
    answer = query(location)
    check("the right password: 303 to the redirect URI with a code and the state",
          response.status_code == 303 and location.startswith(redirect_uri + "?") and answer.get("state") == state and len(answer.get("code", "")) >= 43
          and answer.get("iss") == server.base, (response.status_code, location))

    try:
        token = client.fetch_token(token_url, authorization_response=location, code_verifier=verifier)
        ok = token.get("token_type") == "Bearer" and token.get("refresh_token") and token.get("expires_in", 0) > 0 and token.get("scope") == SCOPE
        check("Authlib exchanges the code with the verifier: access and refresh tokens", ok, token)
    except Exception as error:  # noqa: BLE001
        check("Authlib exchanges the code with the verifier: access and refresh tokens", False, repr(error))
        return
    ok, detail = verify(server, token["access_token"], jwks)
    check("joserfc verifies the access token with /oauth/jwks: typ at+jwt, iss, sub = username, client_id, scope", ok, detail)

    again = session(redirect_uri)
    code = oauth_error(lambda: again.fetch_token(token_url, authorization_response=location, code_verifier=verifier))
    check("the same code a second time: invalid_grant", code == "invalid_grant", code)

    first_refresh = token["refresh_token"]
    try:
        rotated = client.refresh_token(token_url)
        ok = rotated.get("refresh_token") not in (None, first_refresh) and rotated.get("access_token") != token["access_token"]
        check("refresh: a new access token and a new refresh token (rotation)", ok, rotated)
        ok, detail = verify(server, rotated["access_token"], jwks)
        check("the refreshed access token verifies (same account, client and scope)", ok, detail)
    except Exception as error:  # noqa: BLE001
        check("refresh: a new access token and a new refresh token (rotation)", False, repr(error))
        return
    newest = rotated["refresh_token"]
    code = oauth_error(lambda: client.refresh_token(token_url, refresh_token=first_refresh))
    check("the spent refresh token again: invalid_grant", code == "invalid_grant", code)
    code = oauth_error(lambda: client.refresh_token(token_url, refresh_token=newest))
    check("after the reuse the newest refresh token fails too: the family is revoked", code == "invalid_grant", code)

    # Revocation (RFC 7009) of a fresh family.
    other = session(redirect_uri)
    verifier = generate_token(48)
    location = sign_in(server, other, verifier, Browser())
    try:
        fresh = other.fetch_token(token_url, authorization_response=location, code_verifier=verifier)
    except Exception as error:  # noqa: BLE001
        check("a second sign-in and code exchange", False, repr(error))
        return
    revoked = other.revoke_token(revoke_url, token=fresh["refresh_token"], token_type_hint="refresh_token")
    check("revoke_token: 200 with an empty body", revoked.status_code == 200 and revoked.content == b"", (revoked.status_code, revoked.text))
    code = oauth_error(lambda: other.refresh_token(token_url, refresh_token=fresh["refresh_token"]))
    check("the revoked refresh token no longer refreshes", code == "invalid_grant", code)
    unknown = other.revoke_token(revoke_url, token="not-a-token-of-this-server")
    access = other.revoke_token(revoke_url, token=fresh["access_token"], token_type_hint="access_token")
    check("revoking an unknown token or an access token: 200, nothing to do", unknown.status_code == 200 and access.status_code == 200,
          (unknown.status_code, access.status_code))


def refusals(server, redirect_uri):
    token_url = server.base + "/oauth/token"
    # A PKCE mismatch.
    client = session(redirect_uri)
    verifier = generate_token(48)
    location = sign_in(server, client, verifier, Browser())
    code = oauth_error(lambda: client.fetch_token(token_url, authorization_response=location, code_verifier=generate_token(48)))
    check("a code_verifier that does not match the challenge: invalid_grant", code == "invalid_grant", code)
    code = oauth_error(lambda: session(redirect_uri).fetch_token(token_url, authorization_response=location, code_verifier=verifier))
    check("that code is spent: the right verifier afterwards is refused too", code == "invalid_grant", code)

    browser = Browser()
    base = server.base + "/oauth/authorize"
    for name, uri in [("a wrong redirect URI", redirect_uri.replace("/callback", "/elsewhere")), ("another host's redirect URI", "https://attacker.example/callback")]:
        url, _ = session(uri).create_authorization_url(base, code_verifier=generate_token(48))
        page = browser.open(url)
        check(f"{name}: 400 shown to the user, no Location header", page.status_code == 400 and "Location" not in page.headers, page.status_code)
    url, _ = OAuth2Session("no-such-client", redirect_uri=redirect_uri, code_challenge_method="S256").create_authorization_url(base, code_verifier=generate_token(48))
    page = browser.open(url)
    check("an unknown client: 400 shown to the user, no Location header", page.status_code == 400 and "Location" not in page.headers, page.status_code)
    port = urllib.parse.urlsplit(redirect_uri).port
    other_port = redirect_uri.replace(f":{port}/", f":{port + 1 if port < 65535 else port - 1}/")
    url, _ = session(other_port).create_authorization_url(base, code_verifier=generate_token(48))
    check("a loopback redirect URI on another port is accepted (RFC 8252 §7.3)", browser.open(url).status_code == 200)

    url, state = session(redirect_uri).create_authorization_url(base)  # no code_verifier: no PKCE
    page = browser.open(url)
    answer = query(page.headers.get("Location", ""))
    check("no PKCE: sent back to the client with error=invalid_request and the state",
          page.status_code == 303 and page.headers.get("Location", "").startswith(redirect_uri) and answer.get("error") == "invalid_request"
          and answer.get("state") == state, (page.status_code, page.headers.get("Location")))
    plain = generate_token(48)
    url, state = session(redirect_uri).create_authorization_url(base, code_challenge=plain, code_challenge_method="plain")
    page = browser.open(url)
    answer = query(page.headers.get("Location", ""))
    check("the plain method: sent back with error=invalid_request", page.status_code == 303 and answer.get("error") == "invalid_request"
          and answer.get("state") == state, (page.status_code, page.headers.get("Location")))

    hostile = '"><script>alert(1)</script>'
    url, _ = session(redirect_uri).create_authorization_url(base, state=hostile, code_verifier=generate_token(48))
    page = browser.open(url)
    form = SignInForm(page.text)
    check("a reflected state with <script> is escaped in the page (and read back intact)",
          page.status_code == 200 and "<script>" not in page.text and form.fields.get("state") == hostile, page.text[:300])

# DPoP (RFC 9449): the proofs are made here, with joserfc, from the RFC alone.

def dpop_key(alg):
    return ECKey.generate_key("P-256") if alg == "ES256" else OKPKey.generate_key("Ed25519")


def dpop_proof(key, alg, method, url, access_token=None, **changes):
    """A DPoP proof JWT: typ dpop+jwt, the public jwk; jti, htm, htu, iat and,
    for a resource request, ath = base64url(SHA-256(access token)). `changes`
    replace claims (None drops one)."""
    claims = {"jti": generate_token(32), "htm": method, "htu": url, "iat": int(time.time())}
    if access_token is not None:
        claims["ath"] = s256(access_token)
    claims.update(changes)
    claims = {name: value for name, value in claims.items() if value is not None}
    header = {"typ": "dpop+jwt", "alg": alg, "jwk": key.as_dict(private=False)}
    return jose_jws.serialize_compact(header, json.dumps(claims).encode(), key, algorithms=[alg])


def claims_of(token, jwks):
    """The claims of one of the server's access tokens, verified with its JWKS ({} if it does not verify)."""
    try:
        return jose_jwt.decode(token, KeySet.import_key_set(jwks), algorithms=["EdDSA"]).claims
    except Exception:  # noqa: BLE001 - a token that does not verify has no claims to compare
        return {}


def desk_token(server, proof=None):
    """The desk's client_credentials request (HTTP Basic), with a DPoP header when given a proof."""
    basic = base64.b64encode(f"desk-1:{urllib.parse.quote(DESK_SECRET)}".encode()).decode()
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic " + basic}
    if proof is not None:
        headers["DPoP"] = proof
    return request(server, "POST", "/oauth/token", raw=b"grant_type=client_credentials", headers=headers)


def dpop_desk(server, jwks):
    token_url = server.base + "/oauth/token"
    path = "/wlp/v1/transactions"
    resource = server.base + path  # htu: the URL without its query

    def transactions(token, proof=None, scheme="DPoP"):
        headers = {"Authorization": f"{scheme} {token}"}
        if proof is not None:
            headers["DPoP"] = proof
        return request(server, "GET", path + "?page=1&size=5", headers=headers)

    key = dpop_key("ES256")
    status, _, answer = desk_token(server, dpop_proof(key, "ES256", "POST", token_url))
    token = answer.get("access_token", "") if isinstance(answer, dict) else ""
    claims = claims_of(token, jwks)
    check("client_credentials with a joserfc ES256 proof: token_type DPoP, cnf.jkt = the key's RFC 7638 thumbprint",
          status == 200 and answer.get("token_type") == "DPoP" and claims.get("cnf") == {"jkt": key.thumbprint()}
          and claims.get("client_id") == "desk-1", (status, answer, claims))
    if status != 200:
        return

    proof = dpop_proof(key, "ES256", "GET", resource, token)
    status, _, body = transactions(token, proof)
    check("the desk route takes the bound token as Authorization: DPoP with a proof for the request (200)",
          status == 200 and isinstance(body, dict) and "content" in body, (status, body))
    status, _, body = transactions(token, proof)
    check("the same proof a second time: 401", status == 401, (status, body))
    status, _, body = transactions(token, scheme="Bearer")
    check("the bound token as Bearer: 401", status == 401, (status, body))
    status, _, body = transactions(token, dpop_proof(key, "ES256", "GET", resource, token), scheme="Bearer")
    check("the bound token as Bearer, even with a DPoP header: 401", status == 401, (status, body))
    status, _, body = transactions(token)
    check("the DPoP scheme without a DPoP header: 401", status == 401, (status, body))
    other = dpop_key("ES256")
    status, _, body = transactions(token, dpop_proof(other, "ES256", "GET", resource, token))
    check("a proof by another key: 401", status == 401, (status, body))
    for name, proof in [("a wrong htm (POST)", dpop_proof(key, "ES256", "POST", resource, token)),
                        ("a wrong htu (another path)", dpop_proof(key, "ES256", "GET", server.base + "/wlp/v1/payments", token)),
                        ("no ath", dpop_proof(key, "ES256", "GET", resource)),
                        ("the ath of another token", dpop_proof(key, "ES256", "GET", resource, token + "x")),
                        ("an iat an hour old", dpop_proof(key, "ES256", "GET", resource, token, iat=int(time.time()) - 3600))]:
        status, _, body = transactions(token, proof)
        check(f"a proof with {name}: 401", status == 401, (status, body))
    status, _, body = transactions(token, dpop_proof(key, "ES256", "GET", resource, token))
    check("a fresh proof after the refusals: 200 again", status == 200, (status, body))
    status, _, body = transactions(token, dpop_proof(key, "ES256", "GET", resource + "?page=1&size=5", token))
    check("an htu that carries the query is compared without it (RFC 9449 §4.3): 200", status == 200, (status, body))

    status, _, answer = desk_token(server)
    plain = answer.get("access_token", "") if isinstance(answer, dict) else ""
    check("without a DPoP header the desk token is Bearer, with no cnf", status == 200 and answer.get("token_type") == "Bearer"
          and "cnf" not in claims_of(plain, jwks), (status, answer))
    status, _, body = transactions(plain, dpop_proof(key, "ES256", "GET", resource, plain))
    check("an unbound token under the DPoP scheme (with a valid proof): 401", status == 401, (status, body))
    status, _, body = transactions(plain, scheme="Bearer")
    check("the unbound token as Bearer: 200", status == 200, (status, body))

    status, _, answer = desk_token(server, dpop_proof(key, "ES256", "POST", server.base + "/oauth/other"))
    check("a token-endpoint proof with a wrong htu: 400 invalid_dpop_proof",
          status == 400 and isinstance(answer, dict) and answer.get("error") == "invalid_dpop_proof", (status, answer))
    status, _, answer = desk_token(server, dpop_proof(key, "ES256", "GET", token_url))
    check("a token-endpoint proof with htm GET: 400 invalid_dpop_proof",
          status == 400 and isinstance(answer, dict) and answer.get("error") == "invalid_dpop_proof", (status, answer))
    proof = dpop_proof(key, "ES256", "POST", token_url)
    first, _, _ = desk_token(server, proof)
    status, _, answer = desk_token(server, proof)
    check("a token-endpoint proof replayed: 200 the first time, 400 invalid_dpop_proof the second",
          first == 200 and status == 400 and isinstance(answer, dict) and answer.get("error") == "invalid_dpop_proof", (first, status, answer))

    edkey = dpop_key("EdDSA")
    status, _, answer = desk_token(server, dpop_proof(edkey, "EdDSA", "POST", token_url))
    token = answer.get("access_token", "") if isinstance(answer, dict) else ""
    check("an EdDSA (Ed25519) proof: token_type DPoP, cnf.jkt = the OKP key's thumbprint",
          status == 200 and answer.get("token_type") == "DPoP" and claims_of(token, jwks).get("cnf") == {"jkt": edkey.thumbprint()},
          (status, answer))
    status, _, body = transactions(token, dpop_proof(edkey, "EdDSA", "GET", resource, token))
    check("the desk route takes the EdDSA-bound token with an EdDSA proof (200)", status == 200, (status, body))
    status, _, body = transactions(token, dpop_proof(key, "ES256", "GET", resource, token))
    check("the EdDSA-bound token with the ES256 key's proof: 401", status == 401, (status, body))


def dpop_code_flow(server, redirect_uri, jwks):
    token_url = server.base + "/oauth/token"

    def with_proof(key, alg):
        return {"Accept": "application/json", "DPoP": dpop_proof(key, alg, "POST", token_url)}

    key = dpop_key("ES256")
    client = session(redirect_uri)
    verifier = generate_token(64)
    location = sign_in(server, client, verifier, Browser())
    try:
        token = client.fetch_token(token_url, authorization_response=location, code_verifier=verifier, headers=with_proof(key, "ES256"))
    except Exception as error:  # noqa: BLE001
        check("the code exchange with a DPoP proof (Authlib): token_type DPoP, cnf.jkt", False, repr(error))
        return
    ok, detail = verify(server, token.get("access_token", ""), jwks)
    claims = claims_of(token.get("access_token", ""), jwks)
    check("the code exchange with a DPoP proof (Authlib): token_type DPoP, cnf.jkt, a refresh token",
          ok and token.get("token_type") == "DPoP" and claims.get("cnf") == {"jkt": key.thumbprint()} and token.get("refresh_token"),
          (token, detail))

    try:
        rotated = client.refresh_token(token_url, refresh_token=token["refresh_token"], headers=with_proof(key, "ES256"))
        claims = claims_of(rotated.get("access_token", ""), jwks)
        check("refresh with a proof of the same key: token_type DPoP, the same cnf.jkt, a new refresh token",
              rotated.get("token_type") == "DPoP" and claims.get("cnf") == {"jkt": key.thumbprint()}
              and rotated.get("refresh_token") not in (None, token["refresh_token"]) and claims.get("sub") == USERNAME, (rotated, claims))
    except Exception as error:  # noqa: BLE001
        check("refresh with a proof of the same key: token_type DPoP, the same cnf.jkt, a new refresh token", False, repr(error))
        return
    current = rotated["refresh_token"]

    code = oauth_error(lambda: session(redirect_uri).refresh_token(token_url, refresh_token=current))
    check("the bound family refreshed without a proof: invalid_grant", code == "invalid_grant", code)
    other = dpop_key("ES256")
    code = oauth_error(lambda: session(redirect_uri).refresh_token(token_url, refresh_token=current, headers=with_proof(other, "ES256")))
    check("the bound family refreshed with another key's proof: invalid_grant", code == "invalid_grant", code)
    edkey = dpop_key("EdDSA")
    code = oauth_error(lambda: session(redirect_uri).refresh_token(token_url, refresh_token=current, headers=with_proof(edkey, "EdDSA")))
    check("... or with an EdDSA key's proof: invalid_grant", code == "invalid_grant", code)
    try:
        again = client.refresh_token(token_url, refresh_token=current, headers=with_proof(key, "ES256"))
        claims = claims_of(again.get("access_token", ""), jwks)
        check("the refusals did not spend it: the right key's proof still refreshes (DPoP, same cnf.jkt)",
              again.get("token_type") == "DPoP" and claims.get("cnf") == {"jkt": key.thumbprint()}
              and again.get("refresh_token") not in (None, current), (again, claims))
    except Exception as error:  # noqa: BLE001
        check("the refusals did not spend it: the right key's proof still refreshes (DPoP, same cnf.jkt)", False, repr(error))
        return

    # The passkey routes read the same tokens: the bound one only under the DPoP scheme.
    access = again["access_token"]
    url = server.base + "/webauthn/registration/options"
    body = {"username": USERNAME}
    status, _, answer = request(server, "POST", "/webauthn/registration/options", body, headers={"Authorization": "Bearer " + access})
    check("a passkey route refuses the bound user token as Bearer: 401", status == 401, (status, answer))
    status, _, answer = request(server, "POST", "/webauthn/registration/options", body,
                                headers={"Authorization": "DPoP " + access, "DPoP": dpop_proof(key, "ES256", "POST", url, access)})
    check("... and takes it as DPoP with a proof: past the token check, refused only as not proving ownership (409)",
          status == 409, (status, answer))


def dpop(server, redirect_uri):
    _, _, metadata = request(server, "GET", "/.well-known/oauth-authorization-server")
    algorithms = metadata.get("dpop_signing_alg_values_supported", []) if isinstance(metadata, dict) else []
    check("metadata: dpop_signing_alg_values_supported lists ES256 and EdDSA", "ES256" in algorithms and "EdDSA" in algorithms, metadata)
    _, _, jwks = request(server, "GET", "/oauth/jwks")
    dpop_desk(server, jwks)
    dpop_code_flow(server, redirect_uri, jwks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tokenmint-oauth-") as state:
        port, callback_port = free_port(), free_port()
        redirect_uri = f"http://127.0.0.1:{callback_port}/callback"
        setup(state, redirect_uri)
        add_client(state)
        server = Server(state, port)
        line = server.start()
        check("the server starts", line == "listening on " + server.base, line)
        try:
            flow(server, redirect_uri)
            refusals(server, redirect_uri)
            dpop(server, redirect_uri)
        finally:
            code = server.stop()
        check("SIGTERM: the server exits 0", code == 0, code)
    print(f"{server_e2e.passed} passed, {server_e2e.failed} failed")
    return 1 if server_e2e.failed else 0


if __name__ == "__main__":
    sys.exit(main())
