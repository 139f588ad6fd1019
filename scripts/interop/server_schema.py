#!/usr/bin/env python3
"""schemathesis against a live `tokenmint serve`: generated requests for every
operation of the server's own OpenAPI 3.1 document, as a cash desk (a
client-credentials token in every request), a bounded, seeded run. Checks: no
5xx for any input, every status code and content type documented, every
documented JSON body matching its schema. Then `N passed, M failed`.

The CLI comes from $TOKENMINT (default .build/debug/tokenmint); schemathesis
from the same virtual environment as this interpreter.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_e2e import DESK_SECRET, Server, add_client, check, desk_token, free_port  # noqa: E402
import server_e2e  # noqa: E402

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


def main():
    with tempfile.TemporaryDirectory(prefix="tokenmint-schema-") as state:
        add_client(state)
        server = Server(state, free_port())
        server.start()
        try:
            _, _, answer = desk_token(server)
            desk = answer["access_token"]
            command = [os.path.join(os.path.dirname(sys.executable), "schemathesis"), "run", server.base + "/openapi.json",
                       "--checks", CHECKS, "--max-examples", os.environ.get("TOKENMINT_SCHEMA_EXAMPLES", "30"), "--seed", "1",
                       "--phases", "examples,coverage,fuzzing", "--max-time", "60", "--workers", "2", "--request-timeout", "10",
                       "--no-color", "-H", "Authorization: Bearer " + desk]
            result = subprocess.run(command, capture_output=True, text=True, timeout=400, cwd=state)
            print(result.stdout[-6000:])
            if result.returncode != 0:
                print(result.stderr[-3000:])
            check("schemathesis: no 5xx, documented statuses and content types, bodies match the schema", result.returncode == 0,
                  f"exit {result.returncode}")
        finally:
            code = server.stop()
        check("the server stops cleanly after the run", code == 0, code)
    print(f"{server_e2e.passed} passed, {server_e2e.failed} failed")
    return 1 if server_e2e.failed else 0


if __name__ == "__main__":
    sys.exit(main())
