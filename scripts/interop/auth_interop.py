#!/usr/bin/env python3
"""Auth interop checks: the tokens of `tokenmint auth` verified by joserfc and
PyJWT with the issuer's published JWK Set, every flow run from the shell.

A: `auth issue` -> an RFC 9068 access token (header typ at+jwt, kid in the
   JWKS; iss, sub, aud, client_id, scope, jti, exp, iat, azp) that joserfc
   and PyJWT verify; `auth refresh` rotates it and the new token verifies too;
   presenting the spent refresh token fails and revokes the family, so the
   rotated one fails next.
B: step-up. A passkey is made with `fido2 register` and registered with
   `auth passkey`; `auth challenge` + `fido2 assert` + `auth elevate` give an
   elevated token that joserfc verifies (acr, amr, account, scope elevated,
   a lifetime of minutes, no refresh token); the same assertion again, an
   assertion for another account's challenge and a tampered signature are
   refused.
C: tokens made by joserfc are refused by `auth verify`: signed with a
   foreign Ed25519 key under the issuer's kid, alg none, and a genuine token
   with a flipped signature byte.
D: `auth exchange`: the right service key gives {"type":"user_token", ...};
   a wrong key, or an access token of another user, is refused, and no error
   text contains the service key, the presented key or a refresh token.

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint).
Prints one line per check and ends with `N passed, M failed`; exits 1 on any
failure.
"""
import base64
import json
import os
import sys
import tempfile
import time
import warnings

import jwt as pyjwt
from joserfc import jwt as jf_jwt
from joserfc.jwk import KeySet, OKPKey
from joserfc.jwt import JWTClaimsRegistry

from tmcli import Checks, b64u, run

ISS = "https://auth.tokenmint.test"
AUD = "https://api.tokenmint.test"
RP = "tokenmint.test"
ORIGIN = "https://tokenmint.test"
ACCOUNT = "6f1c2a8e-3b7d-4e5f-9a0b-1c2d3e4f5a6b"
OTHER = "0b9e8d7c-6a5f-4e3d-8c2b-1a0f9e8d7c6b"
CLIENT = "pos-app"

check = Checks()


def ok_json(store, *args):
    rc, out, err = run(store, *args)
    if rc != 0:
        raise SystemExit(f"tokenmint {' '.join(args)} failed: {err}")
    return json.loads(out)


def joserfc_verify(token, jwks, **essential):
    keys = KeySet.import_key_set(jwks)
    decoded = jf_jwt.decode(token, keys, algorithms=["EdDSA"])
    claims = {"iss": {"essential": True, "value": ISS}, "aud": {"essential": True, "value": AUD},
              "sub": {"essential": True}, "exp": {"essential": True}, "iat": {"essential": True},
              "jti": {"essential": True}, "client_id": {"essential": True, "value": CLIENT}}
    claims.update(essential)
    JWTClaimsRegistry(**claims).validate(decoded.claims)
    return decoded


def pyjwt_verify(token, jwks):
    kid = pyjwt.get_unverified_header(token)["kid"]
    key = pyjwt.PyJWKSet.from_dict(jwks)[kid]
    return pyjwt.decode(token, key.key, algorithms=["EdDSA"], audience=AUD, issuer=ISS,
                        options={"require": ["exp", "iat", "sub", "jti"]})


def accepted(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
        return True
    except Exception:  # any refusal by the library counts as not accepted
        return False


def group_a(store, jwks):
    issued = ok_json(store, "auth", "issue", "--account", ACCOUNT, "--client-id", CLIENT, "--scope", "payments", "--scope", "read")
    token = issued["access_token"]
    decoded = joserfc_verify(token, jwks, scope={"essential": True, "value": "payments read"},
                             azp={"essential": True, "value": CLIENT})
    check("A joserfc verifies the access token", True)
    check("A header typ is at+jwt, alg EdDSA, kid in the JWKS",
          decoded.header.get("typ") == "at+jwt" and decoded.header.get("alg") == "EdDSA"
          and decoded.header.get("kid") in [k["kid"] for k in jwks["keys"]], decoded.header)
    claims = pyjwt_verify(token, jwks)
    check("A PyJWT verifies the access token", claims["sub"] == ACCOUNT, claims)
    required = {"iss", "sub", "aud", "client_id", "scope", "jti", "exp", "iat", "azp"}
    check("A RFC 9068 claims all present", required <= set(claims), sorted(claims))
    check("A expiry in minutes and matches expires_at", 0 < claims["exp"] - claims["iat"] <= 3600
          and claims["exp"] == issued["expires_at"], claims)
    check("A account token carries a refresh token, not elevated",
          bool(issued.get("refresh_token")) and issued["elevated"] is False, issued)
    check("A refresh token is not a JWT", issued["refresh_token"].count(".") == 0)

    rc, out, err = run(store, "auth", "refresh", "--", issued["refresh_token"])
    rotated = json.loads(out) if rc == 0 else {}
    check("A refresh rotates", rc == 0 and rotated.get("refresh_token") not in (None, issued["refresh_token"]), err)
    if rc == 0:
        fresh = pyjwt_verify(rotated["access_token"], jwks)
        check("A the refreshed token verifies, new jti", fresh["jti"] != claims["jti"] and fresh["sub"] == ACCOUNT)
        joserfc_verify(rotated["access_token"], jwks)
    rc, _, err = run(store, "auth", "refresh", "--", issued["refresh_token"])
    check("A spent refresh token refused (-611)", rc == 1 and "-611" in err, err)
    check("A the error text does not carry the refresh token", issued["refresh_token"] not in err)
    rc, _, err = run(store, "auth", "refresh", "--", rotated.get("refresh_token", "x"))
    check("A reuse revoked the family: the rotated token is refused", rc == 1 and "-610" in err, err)
    rc, _, err = run(store, "auth", "refresh", "--", b64u(os.urandom(32)))
    check("A unknown refresh token refused", rc == 1, err)
    return token


def step_up(store, tmp, account, credential, uv=True, tamper=False):
    challenge = run(store, "auth", "challenge", "--account", account)[1].strip()
    args = ["fido2", "assert", "--rp", RP, "--origin", ORIGIN, f"--challenge={challenge}", "--credential", credential]
    assertion = ok_json(store, *(args + (["--uv"] if uv else [])))
    if tamper:
        sig = bytearray(base64.urlsafe_b64decode(assertion["response"]["signature"] + "=="))
        sig[-1] ^= 1
        assertion["response"]["signature"] = b64u(bytes(sig))
    path = os.path.join(tmp, "assertion.json")
    with open(path, "w") as f:
        json.dump(assertion, f)
    return path


def group_b(store, tmp, jwks):
    challenge = b64u(os.urandom(32))
    reg = ok_json(store, "fido2", "register", "--rp", RP, "--origin", ORIGIN, f"--challenge={challenge}",
                  "--user-id", "0102", "--user-name", "alice", "--uv")
    reg_path = os.path.join(tmp, "registration.json")
    with open(reg_path, "w") as f:
        json.dump(reg, f)
    rc, out, err = run(store, "auth", "passkey", "--account", ACCOUNT, f"--challenge={challenge}", "--in", reg_path)
    check("B passkey registered for the account", rc == 0 and out.strip() == reg["rawId"], err)
    credential = reg["rawId"]

    path = step_up(store, tmp, ACCOUNT, credential)
    rc, out, err = run(store, "auth", "elevate", "--account", ACCOUNT, "--client-id", CLIENT, "--assertion", path)
    check("B a verified assertion gives an elevated token", rc == 0, err)
    if rc == 0:
        elevated = json.loads(out)
        decoded = joserfc_verify(elevated["access_token"], jwks, acr={"essential": True},
                                 amr={"essential": True}, account={"essential": True, "value": ACCOUNT},
                                 scope={"essential": True, "value": "elevated"})
        claims = decoded.claims
        check("B joserfc verifies it: acr, amr (hwk, user), account", claims["amr"] == ["hwk", "user"], claims)
        check("B it lives minutes and has no refresh token",
              claims["exp"] - claims["iat"] <= 600 and "refresh_token" not in elevated and elevated["elevated"] is True, elevated)
        check("B PyJWT verifies it", pyjwt_verify(elevated["access_token"], jwks)["account"] == ACCOUNT)
    rc, _, err = run(store, "auth", "elevate", "--account", ACCOUNT, "--client-id", CLIENT, "--assertion", path)
    check("B the same assertion again is refused (-621)", rc == 1 and "-621" in err, err)

    path = step_up(store, tmp, ACCOUNT, credential, tamper=True)
    rc, _, err = run(store, "auth", "elevate", "--account", ACCOUNT, "--client-id", CLIENT, "--assertion", path)
    check("B a tampered signature is refused", rc == 1 and "-62" in err, err)

    path = step_up(store, tmp, OTHER, credential)
    rc, _, err = run(store, "auth", "elevate", "--account", OTHER, "--client-id", CLIENT, "--assertion", path)
    check("B another account's step-up with this passkey is refused", rc == 1, err)
    path = step_up(store, tmp, OTHER, credential)
    rc, _, err = run(store, "auth", "elevate", "--account", ACCOUNT, "--client-id", CLIENT, "--assertion", path)
    check("B a challenge issued for another account is refused", rc == 1, err)


def group_c(store, jwks, token):
    kid = jwks["keys"][0]["kid"]
    now = int(time.time())
    claims = {"iss": ISS, "sub": ACCOUNT, "aud": AUD, "client_id": CLIENT, "scope": "payments", "jti": b64u(os.urandom(16)),
              "iat": now, "exp": now + 300, "azp": CLIENT}
    foreign = OKPKey.generate_key("Ed25519", parameters={"kid": kid})
    forged = jf_jwt.encode({"alg": "EdDSA", "typ": "at+jwt", "kid": kid}, claims, foreign, algorithms=["EdDSA"])
    check("C control: joserfc accepts its own forged token with its own key", accepted(jf_jwt.decode, forged, foreign, algorithms=["EdDSA"]))
    rc, _, err = run(store, "auth", "verify", forged)
    check("C a token signed by a foreign key under the issuer's kid is refused", rc == 1, err)
    header = b64u(json.dumps({"alg": "none", "typ": "at+jwt", "kid": kid}).encode())
    rc, _, err = run(store, "auth", "verify", f"{header}.{b64u(json.dumps(claims).encode())}.")
    check("C alg none is refused", rc == 1, err)
    head, body, sig = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(sig + "=="))
    raw[0] ^= 1
    rc, _, err = run(store, "auth", "verify", f"{head}.{body}.{b64u(bytes(raw))}")
    check("C a flipped signature byte is refused", rc == 1, err)
    rc, out, err = run(store, "auth", "verify", token)
    check("C control: the genuine token verifies", rc == 0 and json.loads(out)["sub"] == ACCOUNT, err)


def group_d(store, tmp, token):
    service_key, wrong_key = os.urandom(32), os.urandom(32)
    key_path, wrong_path = os.path.join(tmp, "service.key"), os.path.join(tmp, "wrong.key")
    with open(key_path, "wb") as f:
        f.write(service_key)
    with open(wrong_path, "wb") as f:
        f.write(wrong_key)
    rc, out, err = run(store, "auth", "exchange", "--user-id", ACCOUNT, "--access-token", token, "--service-key-file", key_path)
    body = json.loads(out) if rc == 0 else {}
    check("D exchange gives {type: user_token, user_token}", body.get("type") == "user_token" and len(body.get("user_token", "")) >= 32, err)
    rc, _, err1 = run(store, "auth", "exchange", "--user-id", ACCOUNT, "--access-token", token, "--service-key-file", key_path,
                      "--presented-key-file", wrong_path)
    check("D a wrong service key is refused (-630)", rc == 1 and "-630" in err1, err1)
    rc, _, err2 = run(store, "auth", "exchange", "--user-id", OTHER, "--access-token", token, "--service-key-file", key_path)
    check("D another user's access token is refused", rc == 1, err2)
    secrets = [k.hex() for k in (service_key, wrong_key)] + [b64u(k) for k in (service_key, wrong_key)]
    secrets += [base64.b64encode(k).decode() for k in (service_key, wrong_key)]
    check("D no key material in any error text", not any(s in e for s in secrets for e in (err1, err2)))


def main():
    warnings.simplefilter("ignore")  # joserfc's SecurityWarning for EdDSA (RFC 9864 prefers "Ed25519")
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "state")
        rc, out, err = run(store, "auth", "jwks")
        if rc != 0:
            raise SystemExit(f"auth jwks failed: {err}")
        jwks = json.loads(out)
        check("JWKS has one public Ed25519 key with a kid and no private part",
              len(jwks["keys"]) == 1 and jwks["keys"][0].get("kid") and "d" not in jwks["keys"][0], jwks)
        token = group_a(store, jwks)
        group_b(store, tmp, jwks)
        group_c(store, jwks, token)
        group_d(store, tmp, token)
    sys.exit(check.summary())


if __name__ == "__main__":
    main()
