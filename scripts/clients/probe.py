"""probe.py: the PASS/FAIL harness the Python client probes of
scripts/clients-python.sh share (py_changefeed.py, py_versioning.py,
py_dataprotection.py).

An area is a function decorated with area(label, name): it runs at once,
its assertions (check, eq, error) count as its checks, and it prints one
line, PASS with the count or FAIL with the first failed assertion and the
probe's line that made it. finish() exits non-zero when an area failed.
"""
import os, time, traceback

HERE = os.path.dirname(os.path.abspath(__file__))


class Fail(Exception):
    pass


class _Tally:
    failed = 0
    checks = 0


tally = _Tally()


def check(cond, what, got=None):
    tally.checks += 1
    if not cond:
        raise Fail(what + ("" if got is None else f": got {got!r}"))


def eq(got, want, what):
    return check(got == want, f"{what}: want {want!r}", got)


def error(f, status, code, what):
    """Runs f, which must fail with this HTTP status and Azure error code
    ("" or None: any code)."""
    tally.checks += 1
    try:
        f()
    except Fail:
        raise
    except Exception as e:
        st = getattr(e, "status_code", None)
        ec = str(getattr(getattr(e, "error_code", None), "value", getattr(e, "error_code", "")) or "")
        if not ec and getattr(e, "response", None) is not None:
            # Some calls leave error_code unset (azure-storage-blob's
            # delete_immutability_policy): the answer's header has it.
            ec = e.response.headers.get("x-ms-error-code", "")
        if st != status or (code and ec.lower() != code.lower()):
            raise Fail(f"{what}: want {status} {code}, got {st} {ec}")
        return e
    raise Fail(f"{what}: succeeded, want {status} {code}")


def _where(e):
    """The line of the probe (not of this file or the SDK) that failed."""
    frames = traceback.extract_tb(e.__traceback__)
    own = [f for f in frames if os.path.dirname(os.path.abspath(f.filename)) == HERE and not f.filename.endswith("probe.py")]
    return (own or frames)[-1].lineno


def area(label, name):
    def run(fn):
        t0, tally.checks = time.time(), 0
        try:
            fn()
            print(f"PASS {label} {name}: {tally.checks} checks [{time.time()-t0:.1f}s]", flush=True)
        except Exception as e:
            tally.failed += 1
            msg = str(e).splitlines()[0][:300] if str(e) else ""
            print(f"FAIL {label} {name}: {type(e).__name__}: {msg} (line {_where(e)})", flush=True)
        return fn
    return run


def finish():
    print(f"{'ok' if tally.failed == 0 else 'FAILED'}: {tally.failed} area(s) failed", flush=True)
    raise SystemExit(1 if tally.failed else 0)
