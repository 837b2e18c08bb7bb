# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-host-process-absent.py CAPTURE_JSON PID: a process outside the
recorded container or app, started during the recording, left no frame at
all in the capture (`periscope dump --json` output): not sampled, not
snapshotted."""
import json
import sys

frames = json.load(open(sys.argv[1]))["frames"]
outside = int(sys.argv[2])
n = sum(1 for f in frames if f.get("pid") == outside)
if n:
    print("FAIL: the host process %d has %d frames in the capture" % (outside, n), file=sys.stderr)
    sys.exit(1)
print("ok: the host process %d started during the recording is not in the capture" % outside)
