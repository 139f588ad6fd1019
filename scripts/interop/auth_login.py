#!/usr/bin/env python3
"""`tokenmint auth login`: the OAuth code flow from a terminal, RFC 8252 style.

A fresh `tokenmint serve` with a public client whose redirect URI is a
loopback `http://127.0.0.1:PORT/callback`; `tokenmint auth login` runs as a
subprocess and prints the authorization URL on standard error; this script
plays the browser with the standard library's http.client (the sign-in page,
the credentials posted, the 303 followed to the CLI's loopback listener).
Checks:

  * the authorization URL carries PKCE S256, a state and the loopback
    redirect URI; the listener answers another path 404 and keeps waiting;
  * the browser's redirect gets a page saying who signed in; the CLI exits 0
    and prints {"account", "expiresAt"};
  * `auth status` reads the signed-in state back from the sealed store;
  * `auth logout` revokes at the server (the server logs the revocation of
    the account's refresh-token family for the client) and wipes the store;
    a second logout has nothing to revoke;
  * refusals: an unknown client (−300, before any URL is printed), a forged
    state (−641, and the browser is told), no browser in time (−643), a
    redirect URI that is not loopback or has port 0.

The CLI comes from $TOKENMINT (default .build/debug/tokenmint). One line per
check, then `N passed, M failed` (exit 1 if anything failed).
"""
import argparse
import http.client
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_e2e  # noqa: E402  (one check() and one tally for the run)
from server_e2e import TOKENMINT, Server, check, free_port  # noqa: E402
from server_oauth import SignInForm  # noqa: E402

CLIENT_ID = "terminal-app"
USERNAME = "alice"
PASSWORD = "correct horse battery staple"
PORTLESS = "http://127.0.0.1/portless"
URL_LINE = re.compile(r"open this URL in a browser: (\S+)")

def run(*args, stdin=None):
    return subprocess.run([TOKENMINT, *args], input=stdin, capture_output=True, text=True, timeout=120)


def as_json(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


class Login:
    """A running `tokenmint auth login`; its standard error read as it comes."""

    def __init__(self, store, server, redirect_uri, client_id=CLIENT_ID, timeout=60):
        self.process = subprocess.Popen(
            [TOKENMINT, "auth", "login", "--store", store, "--server", server.base, "--client-id", client_id,
             "--redirect-uri", redirect_uri, "--timeout", str(timeout)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines, self.err, self.out = queue.Queue(), [], []

        def read_err():
            for line in self.process.stderr:
                self.err.append(line)
                self.lines.put(line)
            self.lines.put(None)

        # Both pipes are drained by threads (communicate() would race the
        # stderr reader for the last lines).
        self.readers = [threading.Thread(target=read_err, daemon=True),
                        threading.Thread(target=lambda: self.out.extend(self.process.stdout), daemon=True)]
        for reader in self.readers:
            reader.start()

    def url(self, wait=30):
        """The authorization URL printed, or None if the CLI ended first."""
        deadline = time.time() + wait
        while time.time() < deadline:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                break
            if line is None:
                return None
            match = URL_LINE.search(line)
            if match:
                return match.group(1)
        return None

    def finish(self, wait=60):
        """(exit status, stdout, stderr)."""
        try:
            self.process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for reader in self.readers:
            reader.join(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()
        return self.process.returncode, "".join(self.out), "".join(self.err)


def http_get(url):
    """(status, headers, body) of one GET, redirects not followed."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("GET", parts.path + ("?" + parts.query if parts.query else ""))
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def http_post_form(url, fields):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("POST", parts.path, body=urllib.parse.urlencode(fields),
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def browse(url, forge_state=None):
    """The browser: the sign-in page, the credentials, the redirect followed
    to the loopback listener. Returns the steps' statuses, the Location and
    the listener's page."""
    page_status, _, page = http_get(url)
    form = SignInForm(page)
    fields = dict(form.fields, username=USERNAME, password=PASSWORD)
    post_status, headers, _ = http_post_form(urllib.parse.urljoin(url, form.action or ""), fields)
    location = headers.get("location", "")
    if forge_state is not None and location:
        parts = urllib.parse.urlsplit(location)
        query = [(name, forge_state if name == "state" else value) for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)]
        location = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
    final_status, _, final_page = http_get(location) if location.startswith("http://127.0.0.1:") else (None, {}, "")
    return page_status, post_status, location, final_status, final_page


def setup(state, redirect_uri):
    result = run("serve", "client", "add", "--state", state, "--id", CLIENT_ID, "--redirect-uri", redirect_uri, "--redirect-uri", PORTLESS,
                 "--grant", "authorization_code", "--grant", "refresh_token")
    added = as_json(result.stdout) or {}
    check("serve client add: a public client with two loopback redirect URIs (one without a port)",
          result.returncode == 0 and added.get("confidential") is False and added.get("redirectUris") == [redirect_uri, PORTLESS],
          (result.stdout, result.stderr[-300:]))
    result = run("serve", "account", "add", "--state", state, "--username", USERNAME, "--password-stdin", stdin=PASSWORD + "\n")
    check("serve account add", result.returncode == 0, result.stderr[-300:])


def sign_in(server, store, redirect_uri, stray=False):
    """One `auth login` through the browser; its JSON answer, or None."""
    login = Login(store, server, redirect_uri)
    url = login.url()
    if url is None:
        code, out, err = login.finish(5)
        check("auth login prints the authorization URL on standard error", False, (code, out, err[-500:]))
        return None
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    sent = urllib.parse.urlsplit(query.get("redirect_uri", ""))
    registered = urllib.parse.urlsplit(redirect_uri)
    # A registered URI without a port is sent with the port listened on (RFC 8252 §7.3).
    same = query.get("redirect_uri") == redirect_uri if registered.port else (
        sent.scheme == "http" and sent.hostname == "127.0.0.1" and (sent.port or 0) > 0 and sent.path == registered.path)
    check("the authorization URL: the server's endpoint, PKCE S256, a state, the client and the loopback redirect URI"
          + ("" if registered.port else " (with the port picked)"),
          url.startswith(server.base + "/oauth/authorize?") and query.get("code_challenge_method") == "S256"
          and len(query.get("code_challenge", "")) == 43 and len(query.get("state", "")) >= 22 and query.get("client_id") == CLIENT_ID
          and same and query.get("response_type") == "code", url)
    callback = query.get("redirect_uri", "")
    if stray:
        status, _, _ = http_get(f"http://127.0.0.1:{sent.port}/favicon.ico")
        check("the loopback listener answers another path 404 and keeps waiting", status == 404, status)
    page_status, post_status, location, final_status, final_page = browse(url)
    check("the browser: the sign-in page (200), then 303 to the loopback redirect URI with a code and the state",
          page_status == 200 and post_status == 303 and location.startswith(callback + "?")
          and dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query)).get("state") == query.get("state"),
          (page_status, post_status, location))
    check("the CLI's listener answers the browser: 200, signed in as the account",
          final_status == 200 and "Signed in as " + USERNAME in final_page, (final_status, final_page[:300]))
    code, out, err = login.finish()
    answer = as_json(out) or {}
    check("auth login exits 0 and prints {account, expiresAt}",
          code == 0 and answer.get("account") == USERNAME and isinstance(answer.get("expiresAt"), int) and answer["expiresAt"] > time.time(),
          (code, out, err[-500:]))
    check("no token on standard error", "eyJ" not in err and "code=" not in err, err[-500:])
    return answer


def refusals(server, root, redirect_uri):
    store = os.path.join(root, "refusals")
    # An unknown client: refused by the server before a URL is shown.
    login = Login(store, server, redirect_uri, client_id="no-such-client")
    code, out, err = login.finish()
    check("an unknown client: exit 2 with auth.clientIdInvalid (-300), no URL printed",
          code == 2 and "auth.clientIdInvalid (-300)" in err and "open this URL" not in err, (code, out, err[-500:]))
    # A forged state: the sign-in fails and the browser is told.
    login = Login(store, server, redirect_uri)
    url = login.url()
    if url is None:
        check("a forged state: the URL is printed", False, login.finish(5))
    else:
        _, post_status, _, final_status, final_page = browse(url, forge_state="forged-in-another-tab")
        code, out, err = login.finish()
        check("a forged state: the browser gets 400 and the error, the CLI exits 2 with auth.redirectMismatch (-641)",
              post_status == 303 and final_status == 400 and "redirectMismatch" in final_page and code == 2
              and "auth.redirectMismatch (-641)" in err and out == "", (post_status, final_status, code, out, err[-500:]))
    # Nobody comes back.
    started = time.time()
    login = Login(store, server, redirect_uri, timeout=2)
    url = login.url()
    code, out, err = login.finish()
    check("no browser within --timeout 2: exit 2 with auth.signInTimedOut (-643), soon",
          url is not None and code == 2 and "auth.signInTimedOut (-643)" in err and time.time() - started < 30, (code, err[-500:]))
    status = run("auth", "status", "--store", store)
    check("after the refusals nothing is stored", as_json(status.stdout) == {"state": "signedOut"}, status.stdout)
    for name, uri in [("port 0", "http://127.0.0.1:0/callback"), ("not loopback", "https://app.example/callback"),
                      ("localhost", "http://localhost:8000/callback")]:
        result = run("auth", "login", "--store", store, "--server", server.base, "--client-id", CLIENT_ID, "--redirect-uri", uri)
        check(f"a redirect URI with {name} is refused (exit 2)", result.returncode == 2 and "redirect-uri" in result.stderr,
              (result.returncode, result.stderr[-300:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tokenmint-login-") as root:
        state, store = os.path.join(root, "server"), os.path.join(root, "cli")
        callback_port = free_port()
        redirect_uri = f"http://127.0.0.1:{callback_port}/callback"
        setup(state, redirect_uri)
        server = Server(state, free_port(), log_level="info")
        line = server.start()
        check("the server starts", line == "listening on " + server.base, line)
        try:
            first = sign_in(server, store, redirect_uri)
            status = run("auth", "status", "--store", store)
            check("auth status: authorized as the account, read back from the sealed store",
                  status.returncode == 0 and as_json(status.stdout) == {"state": "authorized", "account": USERNAME}, (status.stdout, status.stderr))
            second = sign_in(server, store, redirect_uri, stray=True)
            check("a second login works on the same port", first is not None and second is not None)
            third = sign_in(server, store, PORTLESS)
            check("a redirect URI registered without a port: the CLI listens on a free port", third is not None)
            result = run("auth", "logout", "--store", store)
            answer = as_json(result.stdout) or {}
            check("auth logout: exit 0, signed out, revoked at the server",
                  result.returncode == 0 and answer == {"status": "signedOut", "account": USERNAME, "revoked": True, "server": server.base},
                  (result.stdout, result.stderr[-500:]))
            status = run("auth", "status", "--store", store)
            check("auth status after logout: signed out", as_json(status.stdout) == {"state": "signedOut"}, status.stdout)
            result = run("auth", "logout", "--store", store)
            check("a second logout: exit 0, nothing to revoke",
                  result.returncode == 0 and as_json(result.stdout) == {"status": "signedOut", "account": None, "revoked": False},
                  (result.stdout, result.stderr[-300:]))
            refusals(server, root, redirect_uri)
        finally:
            code = server.stop()
        check("SIGTERM: the server exits 0", code == 0, code)
        revocations = [entry for entry in server.log.splitlines() if "refresh token family revoked" in entry]
        check("the server revoked one refresh-token family, the account's, for the client, on logout",
              len(revocations) == 1 and f"account={USERNAME}" in revocations[0] and f"client_id={CLIENT_ID}" in revocations[0], revocations)
        check("the server's log holds no token", "eyJ" not in server.log, "")
    print(f"{server_e2e.passed} passed, {server_e2e.failed} failed")
    return 1 if server_e2e.failed else 0


if __name__ == "__main__":
    sys.exit(main())
