#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run.sh of the fast boot (fastinit as PID 1: no systemd, no D-Bus): root
# records the no-frame-pointer workload with a private periscoped.
. "$1/guest-lib.sh"
facts
step install install_periscope || exit 1
if step record-private env PERISCOPED_LOG="$out/periscoped-private.log" \
        periscope record --private -o /root/deep.syscap -- /usr/local/bin/deep-nofp 2000; then
        step report-private report private /root/deep.syscap
fi
exit 0
