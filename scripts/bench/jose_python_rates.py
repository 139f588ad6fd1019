#!/usr/bin/env python3
"""joserfc's (and the sd-jwt reference implementation's) rates for the JWE and
SD-JWT rows of tokenmint-bench, on this machine: the same operations, the
same plaintext size, best of five one-second runs. Prints one line per row.

    .venv-interop/bin/python scripts/bench/jose_python_rates.py
"""
import time

from joserfc import jwe
from joserfc.jwk import ECKey, RSAKey

PLAINTEXT = ("eyJhbGciOiJFUzI1NiJ9." * 14).encode()


def rate(body, seconds=1.0, runs=5):
    best = 0.0
    for _ in range(runs):
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            body()
            n += 1
        best = max(best, n / (time.perf_counter() - start))
    return best


def main():
    ec = ECKey.generate_key("P-256")
    rsa = RSAKey.generate_key(2048)
    rows = []
    for name, key, alg in [("ECDH-ES", ec, "ECDH-ES"), ("RSA-OAEP-256", rsa, "RSA-OAEP-256")]:
        algorithms = [alg, "A256GCM"]
        header = {"alg": alg, "enc": "A256GCM"}
        token = jwe.encrypt_compact(header, PLAINTEXT, key, algorithms=algorithms)
        assert jwe.decrypt_compact(token, key, algorithms=algorithms).plaintext == PLAINTEXT
        rows.append((f"JWE {name} A256GCM encrypt", rate(lambda: jwe.encrypt_compact(header, PLAINTEXT, key, algorithms=algorithms))))
        rows.append((f"JWE {name} A256GCM decrypt", rate(lambda: jwe.decrypt_compact(token, key, algorithms=algorithms))))
    try:
        from jwcrypto import jwk as jwcrypto_jwk
        from sd_jwt.common import SDObj
        from sd_jwt.issuer import SDJWTIssuer
        from sd_jwt.verifier import SDJWTVerifier
        from sd_jwt.holder import SDJWTHolder

        issuer_key = jwcrypto_jwk.JWK.generate(kty="EC", crv="P-256")
        holder_key = jwcrypto_jwk.JWK.generate(kty="EC", crv="P-256")
        names = ["given_name", "family_name", "email", "phone_number", "birthdate", "nationality",
                 "street_address", "locality", "postal_code", "country"]
        now = int(time.time())
        claims = {"iss": "https://issuer.example", "iat": now, "exp": now + 86400}
        claims.update({SDObj(n): f"value of {n}" for n in names})
        issue = lambda: SDJWTIssuer(claims, issuer_key, holder_key, sign_alg="ES256").sd_jwt_issuance
        issued = issue()
        holder = SDJWTHolder(issued)
        holder.create_presentation({n: True for n in names}, "n-0S6_WzA2Mj", "https://verifier.example", holder_key, "ES256")
        presentation = holder.sd_jwt_presentation
        verify = lambda: SDJWTVerifier(presentation, lambda iss, header: issuer_key, "https://verifier.example", "n-0S6_WzA2Mj").get_verified_payload()
        assert len(verify()) >= 13
        rows.append(("SD-JWT issue (10 disclosures)", rate(issue)))
        rows.append(("SD-JWT verify (10 disclosures, KB)", rate(verify)))
    except ImportError:
        pass
    for name, value in rows:
        print(f"{name:36s} {value:10,.0f} ops/s")


if __name__ == "__main__":
    main()
