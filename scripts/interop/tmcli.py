"""Helpers shared by the scripts that drive the `tokenmint` CLI with a state
folder: the call itself, check counting and base64url."""
import base64
import os
import subprocess

TOKENMINT = os.path.abspath(os.environ.get("TOKENMINT", ".build/debug/tokenmint"))


class Fail(Exception):
    """A failed check; its message says what was wrong."""


def expect(cond, msg):
    """Raises Fail(msg) unless cond holds."""
    if not cond:
        raise Fail(msg)


class Checks:
    """Counts and prints checks; `summary()` prints `N passed, M failed`."""

    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, name, cond, detail=""):
        if cond:
            self.passed += 1
            print(f"ok   {name}")
        else:
            self.failed += 1
            print(f"FAIL {name} {detail}")

    def group(self, name, fn, *args):
        """Runs fn(*args) as one check: it passes unless it raises. A crash in
        one check is a failure of that check, not of the run."""
        try:
            fn(*args)
        except Fail as e:
            detail = str(e)
        except Exception as e:
            detail = f"{type(e).__name__}: {e}"
        else:
            self.passed += 1
            print(f"ok    {name}")
            return True
        self.fail(f"{name}: {detail}")
        return False

    def fail(self, message):
        """Counts and prints a failure that happened outside a check."""
        self.failed += 1
        print(f"FAIL  {message}")

    def summary(self):
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def command(store, args):
    """The CLI call: --store goes right after the subcommand words, so that
    "--" may end the options before a base64url value starting with "-"."""
    words = 0
    while words < len(args) and not args[words].startswith("-"):
        words += 1
    return [TOKENMINT, *args[:words], "--store", store, *args[words:]]


def run(store, *args):
    """Runs the CLI to the end: (exit code, stdout, stderr)."""
    proc = subprocess.run(command(store, args), capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr
