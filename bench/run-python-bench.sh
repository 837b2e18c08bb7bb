#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run-python-bench.sh: Periscope beside py-spy on the same Python workloads
# (tests/interp/workloads/), in one run, as ratios (issue 29):
#   split     split.py: time split 2:1 between two call chains by loop
#             counts (leaf_a under mid_a, leaf_b under mid_b), fixed work
#             sized to run about SECONDS alone
#   threads   threads.py: two Python threads and one in hashlib's C code,
#             SECONDS long
# each run alone, under `py-spy record --native --rate RATE --format raw`
# (attached with -p as the workload starts) and under `periscope record -F
# RATE -- …` (a private periscoped on a private bus, tests/lib/periscoped-bus.sh).
# py-spy comes from PyPI: pip installs it into a venv under the cache
# ($PERISCOPE_TEST_CACHE, default /var/cache/periscope-tests, py-spy-venv;
# PY_SPY_VERSION pins one) and the table names its version.
#
#   bench/run-python-bench.sh [BUILD_DIR]
#       env: SECONDS_RECORDED (10), RATE (99), RUNS (1), PYTHON (/usr/bin/python3.11)
#
# Per workload and profiler:
#   - the top functions of the workload (its own def names, ranked by
#     py-spy's share): the share of samples whose stack holds each, and
#     whether Periscope's is within 3 points of py-spy's. Periscope's frames
#     match tolerantly: the function's name as a word anywhere in a frame
#     (`leaf_a`, `py::leaf_a:/…/split.py`, `leaf_a (split.py:17)` all count),
#     since how its Python frames will be spelled is not settled yet;
#   - the share of samples with Python frames (py-spy: a frame `name
#     (file.py:LINE)` or `(<frozen …>:LINE)`; Periscope: a frame holding
#     `.py`, `<module>`, `<frozen ` or starting `py::`);
#   - the profiler's CPU per sample: py-spy's own CPU time (it is not the
#     workload's parent) / its samples; periscoped's CPU time with its
#     reaped children (the helper) over the recording and its post-stop
#     work / the samples `periscope record` reports;
#   - the workload's slowdown, wall (CPU): its own time per round, wall
#     and the process's CPU (the CPU figure holds on a loaded machine,
#     where the wall one measures the neighbours): split's fixed rounds,
#     each thread's rounds in threads' fixed time, against the mean of
#     two runs alone (one before, one after); with RUNS > 1 the runs are
#     interleaved, stacks, samples and CPU pooled, slowdowns the median.
# Prints a markdown table; RESULTS.md holds a recorded run.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
secs=${SECONDS_RECORDED:-10}
rate=${RATE:-99}
runs=${RUNS:-1}
python=${PYTHON:-/usr/bin/python3.11}
cache=${PERISCOPE_TEST_CACHE:-/var/cache/periscope-tests}
[ "$(id -u)" = 0 ] || { echo "run as root (py-spy's ptrace of the workload, periscoped's perf events)"; exit 1; }
[ -x "$python" ] || { echo "$python missing: apt-get install -y python3.11 (Debian 12's python3)"; exit 1; }
for f in "$build/cli/periscope" "$build/service/periscoped" "$build/sandbox-helper/periscope-helper"; do
        [ -x "$f" ] || { echo "missing $f: build the tree first (meson setup build && ninja -C build)"; exit 1; }
done

# py-spy from PyPI, in a venv of its own, once per pinned version
venv=$cache/py-spy-venv${PY_SPY_VERSION:+-$PY_SPY_VERSION}
if [ ! -x "$venv/bin/py-spy" ]; then
        mkdir -p "$cache"
        rm -rf "$venv"
        /usr/bin/python3 -m venv "$venv" || { echo "python3 -m venv failed: apt-get install -y python3-venv"; exit 1; }
        "$venv/bin/pip" install --quiet --disable-pip-version-check "py-spy${PY_SPY_VERSION:+==$PY_SPY_VERSION}" ||
                { rm -rf "$venv"; echo "pip install py-spy failed (PyPI unreachable?)"; exit 1; }
fi
pyspy_version=$("$venv/bin/py-spy" --version)

export PERISCOPED=$build/service/periscoped
export PERISCOPE_HELPER=$build/sandbox-helper/periscope-helper
. "$top/tests/lib/periscoped-bus.sh"
private_bus_start
periscoped_start

"$python" - "$top" "$build" "$TEST_TMP" "$secs" "$rate" "$python" "$venv/bin/py-spy" "$pyspy_version" \
        "$PERISCOPED_PID" "$BUS_ADDRESS" "$runs" <<'PY'
import ast, os, re, subprocess, sys, time
top, build, tmp, secs, rate, python, pyspy, pyspy_version, daemon, bus, nruns = sys.argv[1:]
secs, rate, daemon, nruns = float(secs), int(rate), int(daemon), int(nruns)
W = f"{top}/tests/interp/workloads"
periscope = f"{build}/cli/periscope"


def proc_cpu_s(pid):
    # utime, stime, and the reaped children's (the helper processes)
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK")


def defs(path):
    return [n.name for n in ast.walk(ast.parse(open(path).read())) if isinstance(n, ast.FunctionDef)]


def run_alone(argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def progress(argv, out):
    """The workload's own figures of speed, wall and CPU seconds: split's
    for its fixed work; threads' for its fixed time, with each thread's
    rounds."""
    m = re.search(r":(.*?)rounds in ([0-9.]+) s \(cpu ([0-9.]+) s\)", out)
    if not m:
        sys.exit(f"{argv[1]} printed no figures: {out!r}")
    rounds = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m.group(1))}
    return (rounds, float(m.group(2)), float(m.group(3)))


def slowdown(alone, under):
    """(wall, CPU) slowdown against the mean of the runs alone: the time
    per round (split: for its fixed rounds; threads: its fixed time over
    each thread's rounds, the mean of the threads' ratios)."""
    def per_round(x, i):
        rounds, secs = x[0], x[i]
        return sum(secs / max(n, 1) for n in rounds.values()) / len(rounds) if len(rounds) > 1 else secs
    return tuple(per_round(under, i) / (sum(per_round(x, i) for x in alone) / len(alone)) for i in (1, 2))


def median_slowdown(pairs):
    def med(v):
        v = sorted(v)
        return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
    return f"{med([w for w, _ in pairs]):.2f}× ({med([c for _, c in pairs]):.2f}×)"


# py-spy also samples threads that wait (for the GIL, a lock, a sleep)
# unless they sleep in a syscall it knows; Periscope samples CPU time. The
# shares compare py-spy's samples that are not waiting.
WAITING = re.compile(r"^(pthread_cond_(timed)?wait|__futex_abstimed_wait|futex_wait|sem_(timed|clock)?wait|take_gil"
                     r"|PyThread_acquire_lock|PyCOND_TIMEDWAIT|select|poll|epoll_wait|(clock_)?nanosleep)"
                     r"(@@?\S+)?( \(|$)")


def running(stacks):
    return [(fr, n) for fr, n in stacks if not any(WAITING.search(x) for x in fr)]


PYSPY_PY = re.compile(r"\((<[^>]*>|[^()]*\.py):\d+\)$")
PERISCOPE_PY = re.compile(r"(^py::|\.py(\W|$)|<module>|<frozen )")


def word(name):
    return re.compile(r"(^|[^A-Za-z0-9_])" + re.escape(name) + r"([^A-Za-z0-9_]|$)")


def read_folded(path):
    stacks = []
    for line in open(path):
        text, _, n = line.rstrip("\n").rpartition(" ")
        if text and n.isdigit():
            stacks.append((text.split(";"), int(n)))
    return stacks


def shares(stacks, funcs, exact):
    total = sum(n for _, n in stacks) or 1
    out = {}
    for f in funcs:
        if exact:  # py-spy: "name (file:line)"
            hit = sum(n for fr, n in stacks if any(x.split(" (", 1)[0] == f for x in fr))
        else:
            w = word(f)
            hit = sum(n for fr, n in stacks if any(w.search(x) for x in fr))
        out[f] = 100.0 * hit / total
    return out


def py_share(stacks, rx):
    total = sum(n for _, n in stacks) or 1
    return 100.0 * sum(n for fr, n in stacks if any(rx.search(x) for x in fr)) / total


def under_pyspy(argv, name):
    out = f"{tmp}/{name}.pyspy.txt"
    w = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)  # py-spy -p wants the interpreter initialized
    s = subprocess.Popen([pyspy, "record", "--native", "--rate", str(rate), "--format", "raw",
                          "-o", out, "-p", str(w.pid)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wout = w.communicate()[0]
    err = s.stdout.read()
    _, st, ru = os.wait4(s.pid, 0)
    if w.returncode != 0 or not os.path.exists(out):
        sys.exit(f"py-spy run of {name} failed: {err[-600:]}")
    m = re.search(r"Samples: (\d+)", err)
    stacks = read_folded(out)
    samples = int(m.group(1)) if m else sum(n for _, n in stacks)
    return dict(stacks=stacks, samples=samples, cpu=ru.ru_utime + ru.ru_stime,
                progress=progress(argv, wout), errors=int(re.search(r"Errors: (\d+)", err).group(1)) if "Errors:" in err else 0)


def under_periscope(argv, name):
    cap = f"{tmp}/{name}.syscap"
    c0 = proc_cpu_s(daemon)
    p = subprocess.run([periscope, "record", "--address", bus, "-F", str(rate), "-o", cap, "--"] + argv,
                       capture_output=True, text=True)
    c1 = proc_cpu_s(daemon)
    m = re.search(r"recorded (\d+) samples", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit(f"periscope record of {name} failed ({p.returncode}): {p.stderr[-800:]}")
    folded = f"{tmp}/{name}.folded"
    with open(folded, "w") as f:
        subprocess.run([periscope, "report", "--folded", "--no-progress", cap], stdout=f, check=True)
    return dict(stacks=read_folded(folded), samples=int(m.group(1)), cpu=c1 - c0,
                progress=progress(argv, p.stdout))


# split.py's rounds for about secs alone
per_round = progress(["split.py"], run_alone([python, f"{W}/split.py", "50"]))[1] / 50
rounds = max(50, int(secs / per_round))
workloads = {
    "split": [python, f"{W}/split.py", str(rounds)],
    "threads": [python, f"{W}/threads.py", str(secs)],
}
print(f"# Python frames beside py-spy: {rate} Hz, {os.cpu_count()} CPUs, load average "
      f"{open('/proc/loadavg').read().split()[0]} at the start")
print(f"python: {subprocess.run([python, '--version'], capture_output=True, text=True).stdout.strip()} ({python}); "
      f"{pyspy_version}; periscope: {build}")
print(f"split: {rounds} rounds (about {secs:.0f} s alone); threads: {secs:.0f} s; {nruns} run(s) of each\n")

runs = {name: [] for name in workloads}
for r in range(nruns):  # interleaved, so the machine's load hits each alike
    for name, argv in workloads.items():
        alone = [progress(argv, run_alone(argv))]
        s = under_pyspy(argv, f"{name}-{r}")
        p = under_periscope(argv, f"{name}-{r}")
        alone.append(progress(argv, run_alone(argv)))
        print(f"run {r + 1}, {name} (rounds, wall s, CPU s): alone {alone[0]}, py-spy {s['progress']}, "
              f"Periscope {p['progress']}, alone {alone[1]}", flush=True)
        runs[name].append((s, p, slowdown(alone, s["progress"]), slowdown(alone, p["progress"])))

rows = []
for name, argv in workloads.items():
    # the runs' stacks, samples and CPU times pooled
    s = dict(stacks=[x for run in runs[name] for x in run[0]["stacks"]],
             samples=sum(run[0]["samples"] for run in runs[name]), cpu=sum(run[0]["cpu"] for run in runs[name]),
             errors=sum(run[0]["errors"] for run in runs[name]))
    p = dict(stacks=[x for run in runs[name] for x in run[1]["stacks"]],
             samples=sum(run[1]["samples"] for run in runs[name]), cpu=sum(run[1]["cpu"] for run in runs[name]))
    slow = (median_slowdown([run[2] for run in runs[name]]), median_slowdown([run[3] for run in runs[name]]))
    funcs = [f for f in defs(argv[1]) if f != "main"]
    ss = shares(running(s["stacks"]), funcs, exact=True)
    ps = shares(p["stacks"], funcs, exact=False)
    topf = sorted(funcs, key=lambda f: -ss[f])[:6]
    agree = [f"{f} {ss[f]:.0f}/{ps[f]:.0f}{'' if abs(ss[f] - ps[f]) <= 3 else ' ✗'}" for f in topf]
    n_ok = sum(abs(ss[f] - ps[f]) <= 3 for f in topf)
    # the tolerant matching, checked on frames that do name Python
    # functions: py-spy's own, as if Periscope had written them
    self_check = shares(running(s["stacks"]), funcs, exact=False)
    if any(abs(self_check[f] - ss[f]) > 0.01 for f in funcs):
        sys.exit(f"{name}: the tolerant matching disagrees with the exact one on py-spy's frames: {self_check} {ss}")
    rows.append((name, s, p, slow, agree, n_ok, len(topf)))

print("| workload | top functions, py-spy % / Periscope % (✗: over 3 points apart) | within 3 points "
      "| samples with Python frames, py-spy / Periscope | samples, py-spy (not waiting) / Periscope "
      "| CPU per sample, py-spy / Periscope (ratio) | slowdown, wall (CPU), median, py-spy / Periscope |")
print("|---" * 7 + "|")
for name, s, p, slow, agree, n_ok, n in rows:
    cs = s["cpu"] / max(s["samples"], 1) * 1e6
    cp = p["cpu"] / max(p["samples"], 1) * 1e6
    print(f"| {name} | {'; '.join(agree)} | {n_ok} of {n} "
          f"| {py_share(s['stacks'], PYSPY_PY):.1f}% / {py_share(p['stacks'], PERISCOPE_PY):.1f}% "
          f"| {s['samples']} ({sum(n for _, n in running(s['stacks']))}) / {p['samples']} "
          f"| {cs:.0f} us / {cp:.0f} us ({cp / cs if cs else 0:.2f}×) "
          f"| {slow[0]} / {slow[1]} |")
print()
for name, s, p, *_ in rows:
    evalf = 100.0 * sum(n for fr, n in p["stacks"] if "_PyEval_EvalFrameDefault" in fr) / max(sum(n for _, n in p["stacks"]), 1)
    print(f"{name}: {evalf:.1f}% of Periscope's samples have the interpreter's _PyEval_EvalFrameDefault; "
          f"py-spy: {s['errors']} errors")
print(f"load average {open('/proc/loadavg').read().split()[0]} at the end")
PY
