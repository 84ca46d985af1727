#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The files a nodecm run opened under ROOT, from `strace -f -y -e trace=openat2,readlinkat`.

Usage: opened-files.py ROOT STRACE_LOG

Prints one line per open, sorted, as a path under ROOT: "open", "list" (a directory opened
to be listed), "probe" (O_PATH: an existence check or a directory held for the opens under
it) or "readlink", then the path, then " -> ENOENT" (or another errno) when it failed. An
open relative to a directory fd is spelled out from the directory strace names (-y); an
absolute path was resolved inside the root (RESOLVE_IN_ROOT). Opens outside ROOT (the loader's,
stdio's) are left out.
"""
import re
import sys

CALL = re.compile(r'^(?:\d+ +)?(openat2|readlinkat)\((\d+)(?:<([^>]*)>)?, "([^"]*)", (.*)$')


def main():
    root = sys.argv[1].rstrip("/")
    lines = []
    with open(sys.argv[2], encoding="utf-8", errors="replace") as log:
        for raw in log:
            m = CALL.match(raw.rstrip("\n"))
            if not m:
                continue
            call, _fd, dirpath, path, rest = m.groups()
            if path.startswith("/"):
                if dirpath != root:
                    continue  # not through the root fd
                full = path
            else:
                if dirpath is None or not (dirpath == root or dirpath.startswith(root + "/")):
                    continue
                full = dirpath[len(root):] + "/" + path
            if call == "readlinkat":
                kind = "readlink"
            elif "O_PATH" in rest:
                kind = "probe"
            elif "O_DIRECTORY" in rest:
                kind = "list"
            else:
                kind = "open"
            err = re.search(r"= -1 (E[A-Z]+)", rest)
            lines.append(f"{kind} {full}" + (f" -> {err.group(1)}" if err else ""))
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
