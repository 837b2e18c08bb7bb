#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every writer's -o/-f (record, report -f and --timeline, export, symbolize)
# as root with fs.protected_symlinks=1 (Debian's default; set for the run,
# restored after), in a sticky world-writable directory like /tmp:
#   hostile: another user's symlink there to a root-only file, to a root-only
#     name that does not exist yet and to root's listening socket is refused
#     as cp refuses it; the file is untouched (content, inode, mode, nothing
#     created beside it), nothing is created, the listener gets nothing;
#   plain: root's own link there and the user's own link (followed by the
#     user) are written through to their file, the link kept, a read-only
#     file of the user's is refused to the user as cp refuses it; a file is
#     replaced atomically (a new inode, whole, a reader of the old one keeps
#     it); new captures are 0600, other outputs as the umask says, a
#     replaced file keeps its mode without set-id bits; a block device node
#     is refused and stays.
. "$(dirname "$0")/../lib/periscoped-bus.sh"
. "$(dirname "$0")/writers.sh" # run_writer, check_whole, WRITER_KINDS
: "${PERISCOPE:?}" "${MAKE_CAPTURE:?}"
[ "$(id -u)" = 0 ] || fail "this test must run as root (sysctl, another user's links, mknod)"
user=periscope-user
id -u $user >/dev/null 2>&1 || fail "no user $user (scripts/setup.d/30-periscope-users.sh makes it)"

old_protected=$(sysctl -n fs.protected_symlinks) || fail "cannot read fs.protected_symlinks"
restore_and_clean_up() {
        local st=$?
        sysctl -qw fs.protected_symlinks="$old_protected" || echo "cannot restore fs.protected_symlinks=$old_protected" >&2
        (exit $st)
        _periscoped_bus_cleanup
}
trap restore_and_clean_up EXIT
sysctl -qw fs.protected_symlinks=1 || fail "cannot set fs.protected_symlinks=1"

private_bus_start
periscoped_start
cd "$TEST_TMP"
umask 022
"$MAKE_CAPTURE" events fx.syscap >/dev/null || fail "cannot write the fixture capture"
mkdir -m 1777 sticky
mkdir -m 0700 rootonly
echo "root's secret" >rootonly/victim
chmod 0600 rootonly/victim


# --- hostile: another user's links in the sticky directory
victim_was=$(stat -c '%i %a %s' rootonly/victim)
check_victim() {
        [ "$(cat rootonly/victim)" = "root's secret" ] || fail "$1 wrote the root-only file through $user's link"
        [ "$(stat -c '%i %a %s' rootonly/victim)" = "$victim_was" ] ||
                fail "$1 replaced the root-only file through $user's link: $(stat -c '%i %a %s' rootonly/victim)"
        [ "$(ls -A rootonly)" = victim ] || fail "$1 created files beside the root-only file: $(ls -A rootonly)"
}
as_user ln -s "$TEST_TMP/rootonly/victim" sticky/x.out
as_user ln -s "$TEST_TMP/rootonly/created" sticky/new.out
# the kernel refuses root to follow them, as cp shows
cp /etc/hostname sticky/x.out 2>/dev/null && fail "cp followed $user's link: protected_symlinks is not on"
check_victim cp
for kind in $WRITER_KINDS; do
        for link in x.out new.out; do
                run_writer $kind sticky/$link >out.txt 2>&1 && { cat out.txt; fail "$kind -o $user's link $link succeeded"; }
                grep >/dev/null "sticky/$link: Permission denied" out.txt ||
                        { cat out.txt; fail "$kind -o $user's link $link does not say why it is refused"; }
                check_victim "$kind -o LINK"
                [ -L sticky/$link ] || fail "$kind replaced $user's link $link: $(ls -l sticky/$link)"
        done
done
echo "ok: another user's link to a root-only file or name is refused by every writer, the file untouched"

# a user's link to root's listening socket: not connected to
python3 -c "$SOCKET_LISTENER" rootonly/sock from-sock &
listener=$!
wait_for 10 test -S rootonly/sock || { kill $listener; fail "the listener did not bind"; }
as_user ln -s "$TEST_TMP/rootonly/sock" sticky/to-sock
run_writer folded sticky/to-sock >out.txt 2>&1 && { cat out.txt; kill $listener; fail "-o $user's link to root's socket succeeded"; }
grep >/dev/null "Permission denied" out.txt || { cat out.txt; kill $listener; fail "-o $user's link to a socket: no reason"; }
kill $listener
wait $listener 2>/dev/null || true
[ ! -e from-sock ] || fail "root's listener got a connection through $user's link"
echo "ok: another user's link to root's socket is not connected to"

# --- plain: root's own link there, the user's own link followed by the user
for kind in $WRITER_KINDS; do
        echo old >mine
        ln -sfn "$TEST_TMP/mine" sticky/root-link
        run_writer $kind sticky/root-link >out.txt 2>&1 || { cat out.txt; fail "$kind -o root's own link failed"; }
        [ -L sticky/root-link ] || fail "$kind replaced root's own link: $(ls -l sticky/root-link)"
        check_whole $kind mine
done
echo "ok: root's own link in the sticky directory is written through"

mkdir -m 0755 userdir
chown $user: userdir
as_user sh -c "echo old >userdir/theirs"
as_user ln -s "$TEST_TMP/userdir/theirs" sticky/user-link
for kind in flamegraph timeline pprof folded symbolize; do
        as_user sh -c "echo old >userdir/theirs"
        as=(as_user)
        run_writer $kind sticky/user-link >out.txt 2>&1 || { cat out.txt; fail "the user's $kind -o of their own link failed"; }
        as=()
        check_whole $kind userdir/theirs
        [ "$(stat -c %U userdir/theirs)" = $user ] || fail "the user's file changed owner: $(ls -l userdir/theirs)"
        [ -z "$(ls -A userdir | grep '^\.')" ] || fail "temporaries left: $(ls -A userdir)"
done
echo "ok: the user's own link, followed by the user, is written through"
# as for cp, the user may not replace a file of theirs they may not write
as_user sh -c "echo old >userdir/read-only && chmod 0444 userdir/read-only"
as=(as_user)
run_writer folded userdir/read-only >out.txt 2>&1 && { cat out.txt; fail "the user replaced their read-only file"; }
as=()
grep >/dev/null "userdir/read-only: Permission denied" out.txt || { cat out.txt; fail "a read-only file: no reason"; }
[ "$(cat userdir/read-only)" = old ] || fail "the user's read-only file was written"
echo "ok: the user's read-only file is refused, as cp refuses it"

# --- atomic replacement: a new inode, whole; a reader of the old file keeps it
for kind in $WRITER_KINDS; do
        printf 'old content\n' >plain.out
        exec {old}<plain.out
        ino=$(stat -c %i plain.out)
        run_writer $kind plain.out >out.txt 2>&1 || { cat out.txt; fail "$kind -o FILE failed"; }
        [ "$(stat -c %i plain.out)" != "$ino" ] || fail "$kind wrote the old file in place (same inode)"
        check_whole $kind plain.out
        [ "$(cat <&$old)" = "old content" ] || fail "$kind changed the old file under its reader"
        exec {old}<&-
        [ -z "$(ls -A | grep '^\.')" ] || fail "$kind left temporaries: $(ls -A | grep '^\.')"
done
echo "ok: a file is replaced atomically by every writer"

# --- modes: new captures 0600, other new outputs as the umask says, a
# replaced file keeps its mode without set-id bits
for kind in $WRITER_KINDS; do
        case $kind in record | symbolize) want=600 ;; *) want=644 ;; esac
        rm -f new.out
        run_writer $kind new.out >out.txt 2>&1 || { cat out.txt; fail "$kind -o NEW failed"; }
        [ "$(stat -c %a new.out)" = $want ] || fail "$kind created a file $(stat -c %a new.out), not $want (umask 022)"
        rm -f new.out
        (umask 077 && run_writer $kind new.out) >out.txt 2>&1 || { cat out.txt; fail "$kind -o NEW (umask 077) failed"; }
        [ "$(stat -c %a new.out)" = 600 ] || fail "$kind created a file $(stat -c %a new.out) under umask 077"

        echo old >setid.out
        chmod 6755 setid.out
        run_writer $kind setid.out >out.txt 2>&1 || { cat out.txt; fail "$kind -o SETUID-FILE failed"; }
        [ "$(stat -c %a setid.out)" = 755 ] || fail "$kind replaced a 6755 file with mode $(stat -c %a setid.out), not 755"
        echo old >kept.out
        chmod 0640 kept.out
        run_writer $kind kept.out >out.txt 2>&1 || { cat out.txt; fail "$kind -o FILE(0640) failed"; }
        [ "$(stat -c %a kept.out)" = 640 ] || fail "$kind replaced a 0640 file with mode $(stat -c %a kept.out)"
done
echo "ok: new captures 0600, other outputs by the umask, a replaced file's mode kept, set-id bits dropped"

# --- a block device node: refused, left as it is. Its major is one no
# driver has here, so nothing is written even where the refusal is missing.
major=
for m in $(seq 240 252); do
        sed -n '/^Block devices:/,$p' /proc/devices | grep >/dev/null -E "^ *$m " || { major=$m; break; }
done
[ -n "$major" ] || fail "no free block major in 240..252 for a block device node"
mknod blk b "$major" 0 || fail "mknod of a block device ($major,0) failed"
for kind in $WRITER_KINDS; do
        run_writer $kind blk >out.txt 2>&1 && { cat out.txt; fail "$kind -o BLOCK-DEVICE succeeded"; }
        grep >/dev/null "blk is a block device" out.txt || { cat out.txt; fail "$kind -o BLOCK-DEVICE: no reason"; }
        [ -b blk ] || fail "$kind replaced the block device node: $(ls -l blk)"
done
echo "ok: a block device is refused by every writer"
