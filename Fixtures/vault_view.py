"""How the reference tools see a vault: the manifest format of Fixtures/vaults/*.json.

`manifest()` reads a vault with pykeepass; `keepassxc_view()` reads it with `keepassxc-cli export -f xml`.
Run as a script (used by the interop tests):

    python3 Fixtures/vault_view.py pykeepass|keepassxc VAULT [KEYFILE] < password-line
"""
import base64
import hashlib
import json
import os
import struct
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from pykeepass import PyKeePass

def header_facts(path):
    data = path.read_bytes()
    minor, major = struct.unpack_from("<HH", data, 8)
    return f"{major}.{minor}"


def manifest(path, password, keyfile, cipher, kdf, compression, written_by):
    kp = PyKeePass(str(path), password=password, keyfile=str(keyfile) if keyfile else None)
    def group_path(group):
        parts = []
        while group is not None and group.parentgroup is not None:
            parts.append(group.name)
            group = group.parentgroup
        return "/" + "/".join(reversed(parts))
    recycle_bin = kp.recyclebin_group
    entries = []
    for entry in sorted(kp.entries, key=lambda e: (group_path(e.group), e.title or "")):
        # Every string but the five standard ones (pykeepass's custom_properties leaves out `otp`).
        standard = {"Title", "UserName", "Password", "URL", "Notes"}
        custom = {s.findtext("Key"): s.findtext("Value") or "" for s in entry._element.findall("String")
                  if s.findtext("Key") not in standard}
        protected = sorted(
            s.find("Key").text for s in entry._element.findall("String")
            if s.find("Value") is not None and s.find("Value").get("Protected") == "True")
        entries.append({
            "uuid": str(entry.uuid),
            "group": group_path(entry.group),
            "title": entry.title or "",
            "username": entry.username or "",
            "password": entry.password or "",
            "url": entry.url or "",
            "notes": entry.notes or "",
            "tags": sorted(entry.tags or []),
            "fields": custom,
            "protected": protected,
            "attachments": sorted(
                [{"name": a.filename, "sha256": hashlib.sha256(a.data).hexdigest()} for a in entry.attachments],
                key=lambda a: a["name"]),
            "historyCount": len(entry.history),
            "inRecycleBin": recycle_bin is not None and group_path(entry.group).startswith(group_path(recycle_bin)),
        })
    groups = sorted(group_path(g) for g in kp.groups if g.parentgroup is not None)
    deleted = kp.tree.find("Root/DeletedObjects")
    return {
        "file": path.name,
        "writtenBy": written_by,
        "credentials": {
            "password": password,
            "keyFile": f"keys/{keyfile.name}" if keyfile else None,
        },
        "format": {"version": header_facts(path), "cipher": cipher, "kdf": kdf, "compression": compression},
        "meta": {"name": kp.database_name or "", "recycleBin": recycle_bin is not None},
        "groups": groups,
        "entries": entries,
        "deletedObjects": 0 if deleted is None else len(deleted.findall("DeletedObject")),
    }



def keepassxc_view(path, password, keyfile):
    """The same view from KeePassXC's decrypted XML export (attachment bytes of KDBX 4 are not exported)."""
    args = ["keepassxc-cli", "export", "-q", "-f", "xml"]
    if keyfile:
        args += ["-k", keyfile]
    if password is None:
        args.append("--no-password")
    args.append(path)
    stdin = b"" if password is None else (password + "\n").encode()
    result = subprocess.run(args, input=stdin, capture_output=True, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    if result.returncode != 0:
        sys.exit("keepassxc-cli export failed: " + result.stderr.decode())
    root = ElementTree.fromstring(result.stdout)
    meta = root.find("Meta")
    recycle_uuid = meta.findtext("RecycleBinUUID") if meta.findtext("RecycleBinEnabled") == "True" else None
    if recycle_uuid == "AAAAAAAAAAAAAAAAAAAAAA==":  # the zero UUID: no recycle bin yet
        recycle_uuid = None
    groups, entries = [], []

    def uuid_text(text):
        return str(uuid.UUID(bytes=base64.b64decode(text)))

    def walk(group, path, in_bin):
        for entry in group.findall("Entry"):
            strings = {s.findtext("Key"): (s.find("Value").text or "", s.find("Value").get("ProtectInMemory") == "True")
                       for s in entry.findall("String")}
            standard = ["Title", "UserName", "Password", "URL", "Notes"]
            tags = entry.findtext("Tags") or ""
            entries.append({
                "uuid": uuid_text(entry.findtext("UUID")),
                "group": "/" + "/".join(path),
                "title": strings.get("Title", ("", False))[0],
                "username": strings.get("UserName", ("", False))[0],
                "password": strings.get("Password", ("", False))[0],
                "url": strings.get("URL", ("", False))[0],
                "notes": strings.get("Notes", ("", False))[0],
                "tags": sorted(t for t in tags.replace(",", ";").split(";") if t),
                "fields": {k: v for k, (v, _) in strings.items() if k not in standard},
                "protected": sorted(k for k, (_, p) in strings.items() if p),
                "attachmentNames": sorted(b.findtext("Key") for b in entry.findall("Binary")),
                "historyCount": len(entry.findall("History/Entry")),
                "inRecycleBin": in_bin,
            })
        for child in group.findall("Group"):
            child_path = path + [child.findtext("Name")]
            groups.append("/" + "/".join(child_path))
            walk(child, child_path, in_bin or child.findtext("UUID") == recycle_uuid)

    walk(root.find("Root/Group"), [], False)
    return {"meta": {"name": meta.findtext("DatabaseName") or "", "recycleBin": recycle_uuid is not None},
            "groups": sorted(groups), "entries": sorted(entries, key=lambda e: e["uuid"]),
            "deletedObjects": len(root.findall("Root/DeletedObjects/DeletedObject"))}


if __name__ == "__main__":
    tool, vault = sys.argv[1], sys.argv[2]
    keyfile = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    line = sys.stdin.readline()
    password = None if os.environ.get("VAULT_VIEW_NO_PASSWORD") == "1" else line.rstrip("\n")
    if tool == "pykeepass":
        data = manifest(Path(vault), password, Path(keyfile) if keyfile else None, "", "", "", "pykeepass")
        data["entries"] = sorted(data["entries"], key=lambda e: e["uuid"])
    else:
        data = keepassxc_view(vault, password, keyfile)
    json.dump(data, sys.stdout, ensure_ascii=False, indent=1)
