#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `periscope record` as a person at a terminal uses it, with the private
# periscoped (no system service): exit codes and messages of usage errors,
# files left on disk, where the daemon's log goes, Ctrl-C (SIGINT to the
# terminal's foreground process group, through a real pty), kill -INT on
# periscope alone, a second Ctrl-C, a full disk, progress on a terminal
# only, and the recorded command's PROCESS frame as Sysprof reads it.
# Needs root (a tmpfs for the full disk, another user for a refusal).
set -euo pipefail
: "${PERISCOPE:?}" "${PERISCOPED:?}" "${DEMO:?}" "${SYSPROF_COMPARE:?}"
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
[ "$(id -u)" = 0 ] || fail "needs root (mounts a small tmpfs, records as another user); run it through ./test.sh"
for t in script jq runuser; do command -v $t >/dev/null || fail "$t is missing"; done

tmp=$(mktemp -d)
cleanup() {
        [ -n "${leftover:-}" ] && kill "$leftover" 2>/dev/null || true
        mountpoint -q "$tmp/small" 2>/dev/null && umount "$tmp/small"
        rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp"
cd "$tmp"
# No system bus: the private daemon is used. Its log goes to the default
# places (not the test setup's PERISCOPED_LOG=stderr), except where a check
# wants it on stderr for sanitizer reports.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/no-such-bus
export XDG_STATE_HOME=$tmp/state
unset PERISCOPED_LOG
journal=0; [ -S /run/systemd/journal/stdout ] && journal=1

# expect FILE REGEX: the file has a line matching REGEX (extended)
expect() { grep -Eq -- "$2" "$1" || { echo "--- $1:"; cat "$1"; fail "no line matching /$2/ in $1"; }; }
# only_files NAMES…: the directory holds exactly these (hidden ones too)
only_files() {
        local have want
        have=$(cd "$tmp/out" && ls -A | sort | tr '\n' ' ')
        want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
        [ "$have" = "$want" ] || fail "files left: '$have', expected '$want'"
}
mkdir -p out
# child_of PID PGREP-ARGS…: waits up to 5 s for a child of PID, prints its pid
child_of() {
        local parent=$1 c; shift
        for _ in $(seq 50); do c=$(pgrep -P "$parent" "$@" || true); [ -n "$c" ] && { echo "$c"; return; }; sleep 0.1; done
}
# usage ARGS… == STATUS REGEX: record exits STATUS, says REGEX, leaves no file
# record_sleep OUT: `periscope record -o OUT -- sleep 30` in the background
# (its pid in $rec, stderr in err), the sleep's pid in $leftover, a second on.
record_sleep() {
        "$PERISCOPE" record -o "$1" -- sleep 30 2>err &
        rec=$!
        leftover=$(child_of $rec -x sleep)
        [ -n "$leftover" ] || fail "the command did not start"
        sleep 1
}
usage() {
        local args=() rc=0
        while [ "$1" != "==" ]; do args+=("$1"); shift; done
        shift
        "$PERISCOPE" record -o out/x.syscap "${args[@]}" >stdout 2>err || rc=$?
        [ $rc = "$1" ] || { cat err; fail "record ${args[*]} exited $rc, expected $1"; }
        expect err "$2"
        ! grep -q "option '" err || fail "record ${args[*]} shows a D-Bus option name: $(cat err)"
        only_files
}

# --- usage errors: the option as typed, what is allowed, exit 2
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
usage -F 0 -- true == 2 "^periscope record: -F 0: --frequency must be between 1 and $max "
usage --frequency=-5 -- true == 2 "^periscope record: --frequency -5: --frequency must be between 1 and $max "
usage -F $((max + 1)) -- true == 2 "^periscope record: -F $((max + 1)): --frequency must be between 1 and $max "
usage -p 999999 == 2 "^periscope record: -p 999999: no such process \(\`periscope list\`"
sh -c 'sleep 0.1 & exec sleep 3' & zparent=$!
sleep 0.5
zombie=$(pgrep -P $zparent -x sleep)
usage -p "$zombie" == 2 "^periscope record: -p $zombie: process $zombie has exited \(a zombie"
kill $zparent
usage --pid 1,abc == 2 "^periscope record: --pid 1,abc: 'abc' is not a process id"
usage --duration 0 -- true == 2 "^periscope record: --duration 0: .*between 0.001 and 86400 seconds"
usage --duration 1sec -- true == 2 "^periscope record: --duration 1sec: .*with ms, s, m or h"
usage --duration 25h -- true == 2 "^periscope record: --duration 25h: .*between 0.001 and 86400 seconds"
usage --unwind frame -- true == 2 "^periscope record: --unwind frame: --unwind must be dwarf, fp or auto"
usage --stack-size 12 -- true == 2 "^periscope record: --stack-size 12: .*multiple of 8 between 8 and 65528"
usage --counters cpu,gpu -- true == 2 "^periscope record: --counters cpu,gpu: 'gpu' is not a counter source"
usage --system --pid 1 == 2 "^periscope record: --system already records every process; leave out --pid"
usage == 2 "^periscope record: say what to record"
usage --container periscope-no-such-container == 2 \
        "^periscope record: --container periscope-no-such-container: no running .*\`periscope list\` shows what you may record"
echo "ok usage errors name the option as typed, say what is allowed, exit 2, leave nothing"

# --- a command that cannot run: nothing recorded, nothing on disk
usage -- periscope-no-such-command == 127 "^periscope record: periscope-no-such-command: command not found"
usage -- "$tmp/absent/cmd" == 127 "^periscope record: cannot run $tmp/absent/cmd: No such file or directory"
printf 'not a program\n' >notexec
usage -- ./notexec == 126 "^periscope record: cannot run ./notexec: Permission denied"
# found, but its exec fails (a missing interpreter): the recording had
# started; its capture is dropped
printf '#!/nonexistent/interpreter\n' >badscript
chmod +x badscript
usage -- ./badscript == 127 "^periscope record: cannot run ./badscript: No such file or directory \(nothing recorded\)$"
echo "ok a command that cannot run: 127/126, no capture left"

# --- a refused recording keeps an existing file and leaves no new one
printf 'keep me\n' >out/old.syscap
chown nobody out/old.syscap # writable by the user, as cp would need
chmod 777 out
rc=0
runuser -u nobody -- env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" XDG_STATE_HOME="$tmp/state-nobody" \
        PERISCOPED="$PERISCOPED" "$PERISCOPE" record -o out/old.syscap --system --duration 1 2>err || rc=$?
[ $rc = 1 ] || { cat err; fail "a refused --system exited $rc, expected 1"; }
expect err "^periscope record: recording the whole system needs root"
[ "$(cat out/old.syscap)" = "keep me" ] || fail "the refused recording replaced out/old.syscap"
only_files old.syscap
rm out/old.syscap
echo "ok a refused --system keeps the old file and leaves no new one"

# --- --duration shorter than the command: the summary when the recording
# ends, not once the command exits; the exit status is still the command's
rc=0
"$PERISCOPE" record -o out/d.syscap --duration 500ms -- \
        sh -c 'sleep 4; echo "$(date +%s%N)" >out/d.exited; exit 5' 2>err &
drec=$!
summary_ns=
for _ in $(seq 150); do
        if grep -q 'runs on, no longer recorded' err; then summary_ns=$(date +%s%N); break; fi
        sleep 0.02
done
wait $drec || rc=$?
[ -n "$summary_ns" ] || { cat err; fail "--duration 500ms with a 4 s command: no 'runs on' line within 3 s"; }
[ -s out/d.exited ] && [ "$summary_ns" -lt "$(cat out/d.exited)" ] ||
        { cat err; fail "the summary came after the command had exited, not when the recording ended"; }
[ $rc = 5 ] || { cat err; fail "record --duration with a longer command exited $rc, not the command's 5"; }
expect err '^periscope: recorded [0-9]+ samples \(0 lost\) from [0-9]+ process(es)? in 0\.5 s \(ended: duration\)$'
expect err '^periscope: capture written to out/d.syscap '
[ "$(grep -c '^periscope: recorded' err)" = 1 ] || { cat err; fail "the summary was printed more than once"; }
rm out/d.syscap out/d.exited
echo "ok --duration shorter than the command: summary at the end of the recording, the command's exit status"

# --- a recording in a pipe: summary with the plural right, no live line or
# progress, the daemon's log not on our stderr but in its log file
"$PERISCOPE" record -o out/a.syscap -- sleep 0.4 >stdout 2>err || { cat err; fail "record exited $?"; }
expect err '^periscope: recorded [0-9]+ samples \(0 lost\) from 1 process in [0-9.]+ s \(ended: command-exited\)$'
expect err '^periscope: capture written to out/a.syscap '
! grep -q 'periscoped' err || fail "the private periscoped wrote into record's stderr: $(cat err)"
! grep -q $'\r' err || fail "a live line or progress was written to a pipe"
! grep -q 'symbolizing' err || fail "progress was written to a pipe"
if [ $journal = 0 ]; then
        expect "$XDG_STATE_HOME/periscope/periscoped.log" '^periscoped: recording 1: finished \(command-exited\)'
fi
only_files a.syscap
rm out/a.syscap
echo "ok a recording in a pipe: quiet, daemon log in its file, 1 process"

# --verbose: the daemon's log on our stderr
"$PERISCOPE" record --verbose -o out/v.syscap -- sleep 0.2 2>err || { cat err; fail "record --verbose exited $?"; }
expect err '^periscoped: recording 1: finished \(command-exited\)'
rm out/v.syscap
echo "ok --verbose: the daemon's log on stderr"

# --- the private daemon has its own session and process group
"$PERISCOPE" record -o out/s.syscap -- sleep 3 2>err &
rec=$!
daemon=$(child_of $rec -f periscoped)
[ -n "$daemon" ] || fail "no private periscoped under periscope record"
read -r dsid dpgid < <(ps -o sid=,pgid= -p "$daemon")
read -r rsid rpgid < <(ps -o sid=,pgid= -p $rec)
[ "$dsid" != "$rsid" ] && [ "$dpgid" != "$rpgid" ] && [ "$dsid" = "$daemon" ] ||
        fail "periscoped (sid $dsid, pgid $dpgid) shares periscope's session or group (sid $rsid, pgid $rpgid)"
wait $rec
rm out/s.syscap
echo "ok the private periscoped runs in its own session and process group"

# --- Ctrl-C on a terminal: the pty's ^C sends SIGINT to the foreground
# group (periscope and the command); the recording ends as stopped, the
# capture complete, exit 130, progress shown on the terminal
# The keys' pipe stays open until the command has printed EXIT=: script(1)
# ends the session when its input ends, and finishing a capture under ASan
# on a loaded machine can take longer than any fixed pause.
# script(1) runs the line with $SHELL -c. A non-interactive dash (what
# /bin/sh is, and what CI's environment gives) dies of the pty's SIGINT
# itself and never prints EXIT=; bash waits for its child and goes on when
# the child handled the signal, as an interactive shell does.
tty_record() { # OUT WHAT KEYS…: record WHAT on a pty, type each key (DELAY:KEY;
        # DELAY:!FUNCTION runs FUNCTION instead of typing)
        local out=$1 what=$2; shift 2
        rm -f "$out"
        { for k in "$@"; do
                sleep "${k%%:*}"
                if [[ ${k#*:} == !* ]]; then "${k#*:!}"; else printf "${k#*:}"; fi
          done
          for _ in $(seq 350); do grep -qa 'EXIT=' "$out" 2>/dev/null && break; sleep 0.1; done; } |
                SHELL=/bin/bash timeout 40 script -qefc "$PERISCOPE record -o out/t.syscap $what; echo EXIT=\$?" /dev/null >"$out" || true
        tr '\r' '\n' <"$out" | sed 's/\x1b\[K//g' >"$out.lines"
}
# The commands that must not outlive a stop sleep this long: a duration of
# this run's own, so another test's sleep on the machine is not taken for
# ours; a command just signalled gets a moment to be gone.
long=30.$$
command_gone() { ! pgrep -f "^sleep ${long/./\\.}\$" >/dev/null; }
tty_record tty.out "-- sh -c 'sleep 1; echo from-the-command; exec sleep $long'" '2:\003'
expect tty.out.lines '^EXIT=130$'
# the command's output keeps the terminal: no live line to write after
expect tty.out.lines '^from-the-command$'
grep >/dev/null 'periscope: recording [0-9.]+ s' tty.out.lines && { cat tty.out.lines; fail "a live line beside the command's output"; }
expect tty.out.lines '^periscope: symbolizing [0-9]+/[0-9]+ addresses'
expect tty.out.lines '\(ended: stopped\)$'
"$PERISCOPE" dump --json out/t.syscap >t.json || fail "the interrupted capture is not complete"
jq -e '[.frames[] | select(.type == "METADATA" and .id == "periscope.stats") | .metadata | test("reason=stopped")] == [true]' t.json >/dev/null ||
        fail "the capture's periscope.stats does not say reason=stopped"
wait_for 3 command_gone || fail "the command outlived a Ctrl-C"
rm out/t.syscap
echo "ok Ctrl-C on a terminal: stopped, complete, exit 130, progress shown"

# the service tells a command killed by SIGINT (seen before record's own
# Stop in a race) from one that exited: here only the command gets it
rc=0
"$PERISCOPE" record -o out/i.syscap -- sh -c 'sleep 0.3; kill -INT $$' 2>err || rc=$?
[ $rc = 130 ] || { cat err; fail "a command killed by SIGINT: exit $rc, expected 130"; }
expect err '\(ended: stopped\)$'
rm out/i.syscap
echo "ok a command killed by SIGINT: the recording counts as stopped"

# without a command Ctrl-C ends a recording the same way: exit 130, stopped,
# the capture complete
sleep 30 &
target=$!
tty_record tty3.out "-p $target" '2:\003'
kill $target
expect tty3.out.lines '^EXIT=130$'
expect tty3.out.lines '^periscope: recording [0-9.]+ s, [0-9]+ samples, 0 lost'
expect tty3.out.lines '\(ended: stopped\)$'
"$PERISCOPE" dump --json out/t.syscap | jq -e '[.frames[] | select(.id == "periscope.stats") | .metadata | test("reason=stopped")] == [true]' >/dev/null ||
        fail "the -p capture stopped by Ctrl-C is not complete with reason=stopped"
rm out/t.syscap
echo "ok Ctrl-C on a terminal without a command: stopped, complete, exit 130"

# --- a second Ctrl-C while finishing: says what it leaves behind; the
# service still completes the capture. The private periscoped is held
# (SIGSTOP) over both keys, so the capture cannot be finished before the
# second comes (an idle machine finished it in under the 50 ms between
# them), then let go once record has left.
freeze_daemon() {
        local cli
        cli=$(pgrep -f "^$PERISCOPE record -o out/t\.syscap -- sleep ${long/./\\.}\$") &&
                frozen=$(pgrep -P "$cli" -x periscoped) && kill -STOP "$frozen" ||
                echo "no private periscoped of record to hold (record: ${cli:-none})" >freeze.failed
}
thaw_daemon() { # once record has left
        wait_for 5 grep -qa 'EXIT=' tty2.out 2>/dev/null || true
        [ -z "${frozen:-}" ] || kill -CONT "$frozen"
}
rm -f freeze.failed
tty_record tty2.out "-- sleep $long" '2:!freeze_daemon' '0:\003' '0.05:\003' '0:!thaw_daemon'
[ ! -e freeze.failed ] || fail "$(cat freeze.failed)"
expect tty2.out.lines '^EXIT=130$'
expect tty2.out.lines '^periscope record: interrupted again: leaving without waiting for the capture to be finished\. periscoped completes out/t\.syscap in the background'
# the command had the terminal's first ^C too and died of it: not said to keep running
grep >/dev/null 'keeps running' tty2.out.lines && { cat tty2.out.lines; fail "a second Ctrl-C says a command that died keeps running"; }
# the capture out/t.syscap has its periscope.stats block: periscoped completed it
stats_written() { "$PERISCOPE" dump --json out/t.syscap | jq -e '[.frames[] | select(.id == "periscope.stats")] | length == 1'; }
wait_for 10 stats_written >/dev/null 2>&1 || { stats_written; fail "the capture left behind by a second Ctrl-C was never completed"; }
rm out/t.syscap
echo "ok a second Ctrl-C: leaves, says what it abandons; the capture is completed in the background"

# --- kill -INT on periscope alone: finalizes, then leaves the command running
record_sleep out/k.syscap
kill -INT $rec
start=$(date +%s)
rc=0; wait $rec || rc=$?
[ $rc = 130 ] || { cat err; fail "kill -INT on periscope: exit $rc, expected 130"; }
[ $(($(date +%s) - start)) -le 15 ] || fail "periscope waited for the command after finishing"
expect err '\(ended: stopped\)$'
expect err "^periscope: the command \(pid $leftover\) is still running; it is no longer recorded and keeps running"
kill -0 "$leftover" || fail "the command did not keep running"
kill "$leftover"; leftover=
rm out/k.syscap
echo "ok kill -INT on periscope alone: finalized, exit 130, the command keeps running and is said so"

# --- one signal burst counts once: kill twice at once, and timeout(1),
# which sends SIGINT to periscope and again to its process group (the
# command too), microseconds apart: one stop, the summary, exit 130, and
# no word of a command that keeps running when it died of the signal
record_sleep out/b.syscap
kill -INT $rec; kill -INT $rec
rc=0; wait $rec || rc=$?
[ $rc = 130 ] || { cat err; fail "two SIGINTs at once: exit $rc, expected 130"; }
grep >/dev/null 'interrupted again' err && { cat err; fail "two SIGINTs at once were taken as a second Ctrl-C"; }
expect err '\(ended: stopped\)$'
expect err '^periscope: capture written to out/b\.syscap'
kill "$leftover"; leftover=
# the same 3 ms apart: the first handled before the second comes (two that
# come before the event loop runs are one wakeup anyway), still one burst
record_sleep out/b.syscap
python3 -c 'import os, signal, sys, time
p = int(sys.argv[1])
os.kill(p, signal.SIGINT)
time.sleep(0.003)
os.kill(p, signal.SIGINT)' $rec
rc=0; wait $rec || rc=$?
[ $rc = 130 ] || { cat err; fail "two SIGINTs 3 ms apart: exit $rc, expected 130"; }
grep >/dev/null 'interrupted again' err && { cat err; fail "two SIGINTs 3 ms apart were taken as a second Ctrl-C"; }
expect err '\(ended: stopped\)$'
kill "$leftover"; leftover=
for i in 1 2 3; do
        rc=0
        timeout --preserve-status -s INT 1.5 "$PERISCOPE" record -o out/b.syscap -- sleep $long 2>err || rc=$?
        [ $rc = 130 ] || { cat err; fail "timeout -s INT (run $i): exit $rc, expected 130"; }
        grep >/dev/null 'interrupted again' err && { cat err; fail "timeout -s INT (run $i) was taken as a second Ctrl-C"; }
        grep >/dev/null 'keeps running' err && { cat err; fail "timeout -s INT (run $i): a command that died is said to keep running"; }
        expect err '\(ended: stopped\)$'
        "$PERISCOPE" dump --json out/b.syscap | jq -e '[.frames[] | select(.id == "periscope.stats") | .metadata | test("reason=stopped")] == [true]' >/dev/null ||
                fail "timeout -s INT (run $i): the capture is not complete"
done
wait_for 3 command_gone || fail "a command outlived timeout -s INT"
rm out/b.syscap
echo "ok one signal burst (kill twice, timeout -s INT) counts once: stopped, summary, exit 130"

# --- a full disk: the capture is reported truncated, exit non-zero
mkdir small
mount -t tmpfs -o size=64k tmpfs small
rc=0
"$PERISCOPE" record -o small/full.syscap -- "$DEMO" -t 1000 >/dev/null 2>err || rc=$?
[ $rc -ne 0 ] || { cat err; fail "a capture cut short by ENOSPC exited 0"; }
expect err '^periscope: the capture small/full.syscap is truncated \([0-9.]+.kB kept\): .*No space left on device'
! grep -q 'capture written' err || fail "a truncated capture was reported as written"
umount small
echo "ok a full disk: truncated, exit $rc"

# --- the recorded command's PROCESS frames carry its own argv, never
# periscope's (Sysprof names the process after its first PROCESS frame)
# (the service reads the command line when it drains the exec event, every
# 250 ms or later under load: the command lives long enough to be read)
"$PERISCOPE" record -o out/p.syscap -- sh -c 'sleep 1.5' periscope-argv-marker 2>err || { cat err; fail "record exited $?"; }
"$PERISCOPE" dump --json out/p.syscap >p.json
jq -e '[.frames[] | select(.type == "PROCESS")] | length >= 1' p.json >/dev/null || fail "no PROCESS frame"
jq -e '[.frames[] | select(.type == "PROCESS")][0].cmdline == "sh -c sleep 1.5 periscope-argv-marker"' p.json >/dev/null ||
        fail "the first PROCESS frame is $(jq -c '[.frames[] | select(.type == "PROCESS")][0]' p.json)"
! jq -r '.frames[] | select(.type == "PROCESS") | .cmdline' p.json | grep >/dev/null 'record' ||
        fail "a PROCESS frame names periscope record: $(jq -r '.frames[] | select(.type == "PROCESS") | .cmdline' p.json)"
# Sysprof's own reader reads the same frames
"$SYSPROF_COMPARE" --compare out/p.syscap >compare.out 2>&1 || { cat compare.out; fail "libsysprof-capture reads the capture differently"; }
"$PERISCOPE" info out/p.syscap >info.out
expect info.out '^  [0-9]+ +sh -c sleep 1.5 periscope-argv-marker$'
rm out/p.syscap
echo "ok the command's PROCESS frame carries its own argv (Sysprof's reader agrees)"

# --- info cuts long command lines (--full shows them)
"$PERISCOPE" record -o out/l.syscap -- sh -c 'sleep 1.5' $(seq 1 100) 2>err || { cat err; fail "record exited $?"; }
"$PERISCOPE" info out/l.syscap >info.out
expect info.out '^  [0-9]+ +sh -c sleep 1.5 1 2 3 .*… \([0-9]+ more characters; --full shows them\)$'
"$PERISCOPE" info --full out/l.syscap >info.out
expect info.out '^  [0-9]+ +sh -c sleep 1.5 1 2 3 .* 99 100$'
rm out/l.syscap
echo "ok info cuts long command lines, --full shows them"

# --- help: the program name in the usage line, the real --unwind default
"$PERISCOPE" record --help >help.out
expect help.out '^  periscope record \[OPTION…\] \[-- COMMAND ARGS…\]$'
expect help.out '--unwind=MODE .*default: auto'
"$PERISCOPE" list --help >help.out
expect help.out '^  periscope list \[OPTION…\]$'
echo "ok help: usage lines name the program, --unwind's real default"
only_files

# the private daemons' log holds no sanitizer report (ASan builds)
log=$XDG_STATE_HOME/periscope/periscoped.log
if [ $journal = 0 ]; then
        ! grep -qE "Sanitizer|runtime error:" "$log" || { cat "$log"; fail "the private periscoped reported memory errors"; }
fi
echo "ok the private periscoped's log has no sanitizer report"
