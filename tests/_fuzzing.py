"""The fuzzers' sandbox and the three things they assert of every input (tests/test_fuzz_*.py).

Every input runs in a child forked from one warm server process (combatsim and numpy imported,
nothing run), so a hostile input that hangs or allocates without bound is killed at the time
bound and cannot take the test run with it, and its memory is the child's peak resident size
less what it inherited (``resource`` figures from ``wait4``). A command line runs through the
subprocess-free ``combatsim.cli.main``; an API call is a line of Python, which a failing case's
report quotes as it is.

What holds for every input:

1. the answer: exit 2 with exactly one line on stderr (``combatsim: error: ...``) and nothing on
   stdout, or exit 0 with a valid result (``--json``'s object parses, strictly: no NaN) and on
   stderr at most the program's own notes (no warnings, no tracebacks);
   an API call returns, or raises ValueError or TypeError with a one-line message;
2. inside TIME_BOUND seconds of wall time;
3. under MEMORY_BOUND_MB of memory beyond the server's.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

if not sys.platform.startswith("linux"):  # fork, /proc and wait4's maxrss in kilobytes
    pytest.skip("the fuzz sandbox runs on Linux", allow_module_level=True)

TIME_BOUND = 5.0
MEMORY_BOUND_MB = 200
#: The address-space cap in each child, far above the bound: only a guard for the machine.
ADDRESS_SPACE_GUARD_MB = 8192

#: Examples a fuzz test runs in CI (its reduced form), and in its full form (``pytest -m slow``),
#: where COMBATSIM_FUZZ_EXAMPLES sets the number.
REDUCED_EXAMPLES = 40
FULL_EXAMPLES = int(os.environ.get("COMBATSIM_FUZZ_EXAMPLES", "1000"))


#: True unless ``-m`` asks for the slow tests (a string, as skipif evaluates it with ``config``).
_FULL_FORM_NOT_SELECTED = "'slow' not in (config.getoption('markexpr') or '').replace('not slow', '')"


def full_form(test):
    """The full form of a fuzz test: marked ``slow``, and skipped unless ``-m slow`` selects it
    (pytest alone runs every test, slow or not)."""
    test = pytest.mark.skipif(_FULL_FORM_NOT_SELECTED, reason="the fuzzers' full form: "
                              "COMBATSIM_FUZZ_EXAMPLES=N pytest -m slow tests/test_fuzz_*.py")(test)
    return pytest.mark.slow(test)


SERVER = r'''
import json, os, resource, signal, sys, tempfile, time, traceback

protocol = os.fdopen(os.dup(1), "w", buffering=1)
devnull = os.open(os.devnull, os.O_WRONLY)
os.dup2(devnull, 1)

import numpy as np
import combatsim.cli
from combatsim.cli import main

PREAMBLE = """
import numpy as np
import combatsim
from combatsim.exp import api as exp_api
from combatsim.d100 import api as d100_api
from combatsim.tss import api as tss_api
"""
namespace = {}
exec(PREAMBLE, namespace)


def resident_kb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def address_space_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def child(request, out, err, report):
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the requests' pipe is the server's alone
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    guard = address_space_bytes() + request["guard_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (guard, guard))
    if request.get("cwd"):
        os.chdir(request["cwd"])
    answer = {}
    try:
        if "argv" in request:
            try:
                answer["code"] = main(request["argv"])
            except SystemExit as stop:
                answer["code"] = stop.code if isinstance(stop.code, int) else repr(stop.code)
        else:
            scope = dict(namespace)
            try:
                exec(request["code"], scope)
                result = scope.get("result")
                answer["returned"] = type(result).__name__
                as_dict = getattr(result, "as_dict", None)
                answer["record"] = json.dumps(as_dict() if as_dict else None, allow_nan=False, default=repr)
            except (ValueError, TypeError) as error:
                answer["raised"] = type(error).__name__
                answer["message"] = str(error)
    except BaseException as error:
        answer["crashed"] = "".join(traceback.format_exception_only(type(error), error)).strip()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        report.write(json.dumps(answer).encode())
        report.flush()
        os._exit(0)


for line in sys.stdin:
    request = json.loads(line)
    files = [tempfile.TemporaryFile() for _ in range(3)]
    inherited = resident_kb()
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        child(request, *files)
    deadline = started + request["timeout"]
    timed_out = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() > deadline:
            os.kill(pid, signal.SIGKILL)
            done, status, usage = os.wait4(pid, 0)
            timed_out = True
            break
        time.sleep(0.002)
    seconds = time.perf_counter() - started
    texts = []
    for handle in files:
        handle.seek(0)
        texts.append(handle.read().decode("utf-8", "surrogateescape"))
        handle.close()
    answer = json.loads(texts[2]) if texts[2] else {}
    answer.update(stdout=texts[0], stderr=texts[1], seconds=seconds, timed_out=timed_out,
                  peak_mb=max(0, usage.ru_maxrss - inherited) / 1024,
                  signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)
    protocol.write(json.dumps(answer) + "\n")
'''


@dataclass(frozen=True)
class Outcome:
    """What one input did: the CLI's exit code or the API's return or exception, its output, its
    wall time and its memory."""

    request: str
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float
    timed_out: bool
    signal: int | None = None
    code: int | str | None = None
    returned: str | None = None
    record: str | None = None
    raised: str | None = None
    message: str | None = None
    crashed: str | None = None

    def describe(self) -> str:
        fields = {k: v for k, v in self.__dict__.items() if v not in (None, "", False)}
        return json.dumps(fields, ensure_ascii=True)[:4000]


class Sandbox:
    """The fork server: one per test session, started at the first input."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None

    def _server(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True, encoding="utf-8",
                                             errors="surrogateescape")
        return self._process

    def _ask(self, request: dict, timeout: float) -> Outcome:
        server = self._server()
        request = dict(request, timeout=timeout, guard_mb=ADDRESS_SPACE_GUARD_MB)
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        line = server.stdout.readline()
        if not line:  # the server itself failed (an import error in the tree, say): say so, start anew next time
            self._process = None
            raise RuntimeError(f"the fuzz server exited with {server.wait()}; its stderr is above")
        answer = json.loads(line)
        described = request.get("argv") or request.get("code")
        return Outcome(request=json.dumps(described, ensure_ascii=True), **answer)

    def cli(self, argv: list[str], cwd: str | None = None, timeout: float = TIME_BOUND) -> Outcome:
        """``combatsim.cli.main(argv)``, run in cwd (where relative output paths land)."""
        return self._ask({"argv": list(argv), "cwd": cwd}, timeout)

    def api(self, code: str, timeout: float = TIME_BOUND) -> Outcome:
        """Python source that sets ``result``, with numpy as np and exp_api, d100_api, tss_api."""
        return self._ask({"code": code}, timeout)

    def close(self) -> None:
        if self._process is not None:
            self._process.stdin.close()
            self._process.wait(timeout=10)
            self._process = None


def _bounded(outcome: Outcome, time_bound: float) -> None:
    assert not outcome.timed_out, f"no answer within {time_bound} s: {outcome.describe()}"
    assert outcome.seconds <= time_bound, f"took {outcome.seconds:.1f} s: {outcome.describe()}"
    assert outcome.peak_mb <= MEMORY_BOUND_MB, f"peak {outcome.peak_mb:.0f} MB: {outcome.describe()}"
    assert outcome.crashed is None and outcome.signal is None, f"crashed: {outcome.describe()}"


def _refuse_nan(constant: str):
    raise ValueError(f"{constant} is not JSON")


def assert_cli_answered(outcome: Outcome, json_result: bool = True, time_bound: float = TIME_BOUND) -> None:
    """Exit 2 with one stderr line, or exit 0 with a result, in time and memory."""
    _bounded(outcome, time_bound)
    if outcome.code == 2:
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1 and outcome.stderr.endswith("\n"), f"not one stderr line: {outcome.describe()}"
        assert lines[0].startswith("combatsim") and "Traceback" not in lines[0], outcome.describe()
        assert "internal error" not in lines[0], outcome.describe()
        assert outcome.stdout == "", f"an error that also printed: {outcome.describe()}"
        return
    assert outcome.code == 0, f"exit {outcome.code}: {outcome.describe()}"
    notes = outcome.stderr.splitlines()  # only the program's own notes ("combatsim: wrote out.csv")
    assert all(line.startswith("combatsim: ") and "error" not in line for line in notes), \
        f"exit 0 with stderr: {outcome.describe()}"
    assert outcome.stdout.strip(), f"exit 0 printed nothing: {outcome.describe()}"
    if json_result:
        try:
            json.loads(outcome.stdout, parse_constant=_refuse_nan)
        except ValueError as error:
            raise AssertionError(f"exit 0 without valid JSON ({error}): {outcome.describe()}") from None


def assert_api_answered(outcome: Outcome, time_bound: float = TIME_BOUND) -> None:
    """A return with a record that is JSON, or ValueError/TypeError with a one-line message."""
    _bounded(outcome, time_bound)
    if outcome.raised is not None:
        message = outcome.message or ""
        assert message and "\n" not in message, f"not a one-line message: {outcome.describe()}"
        return
    assert outcome.returned is not None, outcome.describe()



#: The one sandbox of a test run, its server started at the first input and closed at exit.
sandbox = Sandbox()
atexit.register(sandbox.close)
