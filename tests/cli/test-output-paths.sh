#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every writer's -o/-f (record, report -f and --timeline, export, symbolize)
# as root on what is not a plain file: a character device made with mknod
# stays a device, a symlink to a FIFO stays a symlink and the reader gets
# the whole output, a symlink to a regular file stays a symlink while the
# file it points to is replaced (nothing left beside it), a listening
# socket's name is connected to and its listener gets the whole output (the
# socket stays), /dev/stdout in a pipe and '-' write to the pipe and nothing
# else goes there. Each output is
# checked to be whole (a capture `periscope info` reads, an SVG that ends,
# a gzip that unpacks).
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/writers.sh" # run_writer, check_whole, WRITER_KINDS
record_cmd=(sleep 0.2)
: "${PERISCOPE:?}" "${MAKE_CAPTURE:?}"
[ "$(id -u)" = 0 ] || fail "this test must run as root (mknod, devices)"

private_bus_start
periscoped_start
cd "$TEST_TMP"
"$MAKE_CAPTURE" events fx.syscap >/dev/null || fail "cannot write the fixture capture"
mknod dev c 1 3 || fail "mknod of a character device (1,3) failed"
mkfifo fifo
ln -s fifo to-fifo
echo "old" >file
ln -s file to-file

for kind in $WRITER_KINDS; do
        # a character device: written through, still a device
        run_writer $kind dev >out.txt 2>&1 || { cat out.txt; fail "$kind -o DEVICE failed"; }
        [ "$(stat -c %F dev)" = "character special file" ] || fail "$kind replaced the character device: $(ls -l dev)"

        # a symlink to a FIFO: the reader gets it all, the link and the FIFO stay
        cat fifo >from-fifo &
        reader=$!
        run_writer $kind to-fifo >out.txt 2>&1 || { cat out.txt; kill $reader; fail "$kind -o LINK-TO-FIFO failed"; }
        wait $reader
        [ -L to-fifo ] && [ "$(readlink to-fifo)" = fifo ] || fail "$kind replaced the symlink to the FIFO: $(ls -l to-fifo)"
        [ -p fifo ] || fail "$kind replaced the FIFO: $(ls -l fifo)"
        check_whole $kind from-fifo

        # a listening socket's name: connected to, the listener gets it all
        rm -f sock
        python3 -c "$SOCKET_LISTENER" sock from-sock &
        listener=$!
        wait_for 10 test -S sock || { kill $listener; fail "the listener did not bind"; }
        run_writer $kind sock >out.txt 2>&1 || { cat out.txt; kill $listener; fail "$kind -o SOCKET failed"; }
        wait $listener || fail "the socket's listener failed"
        [ -S sock ] || fail "$kind replaced the socket: $(ls -l sock)"
        check_whole $kind from-sock

        # a symlink to a file: the file is replaced, the link kept, no temporary left
        echo "old" >file
        run_writer $kind to-file >out.txt 2>&1 || { cat out.txt; fail "$kind -o LINK-TO-FILE failed"; }
        [ -L to-file ] && [ "$(readlink to-file)" = file ] || fail "$kind replaced the symlink to the file: $(ls -l to-file)"
        [ -f file ] && ! grep -qx old file || fail "$kind did not write the file the symlink points to"
        check_whole $kind file
        leftover=$(ls -A | grep '^\.' || true)
        [ -z "$leftover" ] || fail "$kind left temporaries: $leftover"

        # /dev/stdout and '-' in a pipe: the output and nothing else
        for out in /dev/stdout -; do
                run_writer $kind $out 2>err.txt | cat >from-pipe || { cat err.txt; fail "$kind -o $out | cat failed"; }
                check_whole $kind from-pipe
        done
        [ -L /dev/stdout ] || [ -c /dev/stdout ] || fail "$kind replaced /dev/stdout: $(ls -l /dev/stdout)"
        echo "ok: $kind: a device, a symlink to a FIFO, a socket, a symlink to a file, /dev/stdout and - in a pipe"
done

# an fd periscoped does not take (standard output appending to a file) goes
# through the copying child too: every byte arrives
"$PERISCOPE" record --address "$BUS_ADDRESS" -o - -- sleep 0.2 2>err.txt >>appended.syscap ||
        { cat err.txt; fail "record -o - >> FILE failed"; }
check_whole record appended.syscap
echo "ok: record -o - >> FILE is copied whole"

# a binary output is never written to a terminal; a directory is refused
if [ -e /dev/ptmx ] && command -v script >/dev/null; then
        script -qec "$PERISCOPE symbolize -o /dev/tty $TEST_TMP/fx.syscap" /dev/null >tty.txt 2>&1 || true
        grep >/dev/null "is a terminal and the output is binary" tty.txt || { cat tty.txt; fail "symbolize wrote a capture to a terminal"; }
        echo "ok: a binary output is refused on a terminal"
fi
mkdir adir
"$PERISCOPE" export --format folded -o adir fx.syscap 2>err.txt && fail "export -o DIRECTORY succeeded"
grep >/dev/null "adir is a directory" err.txt || { cat err.txt; fail "export -o DIRECTORY does not say why"; }
echo "ok: a directory is refused with a reason"
