#!/usr/bin/env python3
"""Edits a KeePass vault with pykeepass, as a program of its own would: opens it, makes the edits,
saves it once (pykeepass rewrites the file in place).

Usage: python3 pykeepass_edit.py VAULT EDITS   (stdin: the vault password)

EDITS is a JSON list; each item is ["set", GROUP, TITLE, FIELD, VALUE] (FIELD: username, url, notes,
password) or ["add", GROUP, TITLE, USERNAME]. GROUP is a slash-separated path below the root
("/Shared"). Exits 2 when a group or an entry is missing (nothing saved).
"""
import json
import os
import sys

from pykeepass import PyKeePass


def find_group(keepass, path):
    group = keepass.root_group
    for name in [part for part in path.split("/") if part]:
        group = next((child for child in group.subgroups if child.name == name), None)
        if group is None:
            print(f"no group {path}", file=sys.stderr)
            sys.exit(2)
    return group


def main():
    vault, edits = sys.argv[1], json.loads(sys.argv[2])
    password = sys.stdin.readline().rstrip("\n")
    keepass = PyKeePass(vault, password=password)
    for edit in edits:
        group = find_group(keepass, edit[1])
        if edit[0] == "add":
            keepass.add_entry(group, edit[2], edit[3], "")
        elif edit[0] == "set":
            entry = next((entry for entry in group.entries if entry.title == edit[2]), None)
            if entry is None:
                print(f"no entry {edit[2]} in {edit[1]}", file=sys.stderr)
                sys.exit(2)
            entry.save_history()
            setattr(entry, edit[3], edit[4])
            entry.touch(modify=True)
        else:
            print(f"unknown edit {edit[0]}", file=sys.stderr)
            sys.exit(2)
    mode = os.stat(vault).st_mode & 0o7777
    keepass.save()
    os.chmod(vault, mode)  # a new file may get the umask's mode


main()
