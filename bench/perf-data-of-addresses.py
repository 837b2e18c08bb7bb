#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""perf-data-of-addresses.py OUT BINARY PID ADDRESS...: writes a minimal
perf.data (PERFILE2) in which one process has BINARY mapped at its link-time
addresses and one cpu-clock sample at each ADDRESS, so `perf report` names
exactly the addresses the helper is asked about (bench/run-symbolize-bench.sh
uses it as an anchor). Records: COMM, MMAP of the executable PT_LOAD
segments, then SAMPLE (IP, TID) records; no callchains."""
import struct
import subprocess
import sys

PERF_RECORD_MMAP, PERF_RECORD_COMM, PERF_RECORD_SAMPLE = 1, 3, 9
MISC_USER = 2
SAMPLE_IP, SAMPLE_TID = 1 << 0, 1 << 1
ATTR_SIZE = 112  # PERF_ATTR_SIZE_VER5


def padded(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 8)


def record(kind, body):
    return struct.pack("<IHH", kind, MISC_USER, 8 + len(body)) + body


def exec_segments(binary):
    """(vaddr, memsz, offset) of the executable PT_LOAD segments."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            segs.append((int(f[2], 16), int(f[5], 16), int(f[1], 16)))
    return segs


def main():
    out, binary, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    addrs = [int(a, 0) for a in sys.argv[4:]]
    data = record(PERF_RECORD_COMM, struct.pack("<II", pid, pid) + padded(binary.rsplit("/", 1)[-1][:15]))
    for vaddr, size, off in exec_segments(binary):
        data += record(PERF_RECORD_MMAP, struct.pack("<IIQQQ", pid, pid, vaddr, size, off) + padded(binary))
    for a in addrs:
        data += record(PERF_RECORD_SAMPLE, struct.pack("<QII", a, pid, pid))
    # perf_event_attr (software cpu-clock, sample_type IP|TID), then its ids section (none)
    attr = struct.pack("<IIQQQQQIIQQQQIiQIHH", 1, ATTR_SIZE, 0, 1, SAMPLE_IP | SAMPLE_TID, 0, 0, 0, 0, 0, 0, 0, 0,
                       0, 0, 0, 0, 0, 0)
    assert len(attr) == ATTR_SIZE, len(attr)
    header_size = 104
    attrs_off = header_size
    attrs = attr + struct.pack("<QQ", 0, 0)
    data_off = attrs_off + len(attrs)
    header = b"PERFILE2" + struct.pack("<QQ", header_size, len(attrs))
    header += struct.pack("<QQQQQQ", attrs_off, len(attrs), data_off, len(data), 0, 0)
    header += b"\0" * 32  # no feature sections
    assert len(header) == header_size
    with open(out, "wb") as f:
        f.write(header + attrs + data)


if __name__ == "__main__":
    main()
