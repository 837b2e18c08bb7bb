#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-public-headers.py SOURCE_ROOT: every library folder has one public
header, and code outside a folder includes only that one (docs/
ARCHITECTURE.md's table is read here, so the page and the check cannot
drift). Tests may include inner headers to test a folder's parts; bench/
is outside the rule too. Prints each violation with what to include
instead; exits 1 if there is any."""
import collections
import os
import re
import sys

top = sys.argv[1]
arch = open(os.path.join(top, "docs", "ARCHITECTURE.md")).read()
public = dict(re.findall(r"^\| (\S+)/ \| `([^`]+\.h)` \|$", arch, re.M))
if len(public) < 10:
    sys.exit(f"FAIL: docs/ARCHITECTURE.md's table of public headers has {len(public)} rows; is it still there?")

where = collections.defaultdict(set)  # header name -> folders that hold one of that name
for folder, header in public.items():
    path = os.path.join(top, folder)
    if not os.path.isfile(os.path.join(path, header)):
        print(f"FAIL: {folder}/ has no {header}, which docs/ARCHITECTURE.md names its public header")
        sys.exit(1)
    for f in os.listdir(path):
        if f.endswith(".h"):
            where[f].add(folder)

bad = []
for root, dirs, files in os.walk(top):
    rel = os.path.relpath(root, top)
    dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
    if rel.split(os.sep)[0] in ("tests", "bench"):
        continue
    for f in files:
        if not f.endswith((".c", ".h")):
            continue
        with open(os.path.join(root, f), errors="replace") as src:
            for n, line in enumerate(src, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                h = os.path.basename(m.group(1))
                owners = where.get(h, set())
                if rel in owners:
                    continue  # the folder's own header
                for folder in sorted(owners):
                    if public[folder] != h:
                        bad.append(f"{rel}/{f}:{n}: includes {h}, an inner header of {folder}/: "
                                   f"include {public[folder]} instead")
for b in bad:
    print("FAIL:", b)
print(f"{len(public)} folders, {len(bad)} inner headers included from outside")
sys.exit(1 if bad else 0)
