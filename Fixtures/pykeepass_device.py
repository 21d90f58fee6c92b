"""A device that edits vaults with pykeepass, as an app built on it does (the merge tests' real client).

Reads one JSON document on standard input: {"jobs": [{"path", "password", "clock", "ops": [...]}]} and
applies each job's operations to its vault file, in one process for many jobs. `clock` is the time of
the first operation (ISO 8601, UTC); each operation may move it on by `"after"` seconds (0: the same
second). Times are set the way a careful pykeepass app sets them: a field edit saves history first and
bumps LastModificationTime; a move sets LocationChanged. Deletions write no tombstone (pykeepass
never does). Prints nothing on success; an error names the job and the operation, never a value.

    python3 Fixtures/pykeepass_device.py < jobs.json
"""
import base64
import json
import sys
import uuid as uuidlib
from datetime import datetime, timedelta, timezone

from lxml import etree
from pykeepass import PyKeePass


def find_entry(kp, ident):
    return kp.find_entries(uuid=uuidlib.UUID(ident), first=True)


def find_group(kp, ident):
    if ident == "root":
        return kp.root_group
    return kp.find_groups(uuid=uuidlib.UUID(ident), first=True)


def touch(element, when):
    element._set_times_property("LastModificationTime", when)
    element._set_times_property("LastAccessTime", when)


def moved(element, when):
    element._set_times_property("LocationChanged", when)


def custom_data(element, key, value):
    data = element._element.find("CustomData")
    if data is None:
        data = etree.SubElement(element._element, "CustomData")
        # CustomData comes before Entry/Group children and after Times in KeePassXC's files; order is free for readers.
    for item in data.findall("Item"):
        if item.findtext("Key") == key:
            if value is None:
                data.remove(item)
            else:
                item.find("Value").text = value
            return
    if value is not None:
        item = etree.SubElement(data, "Item")
        etree.SubElement(item, "Key").text = key
        etree.SubElement(item, "Value").text = value


class Holder:
    """An XML element seen as pykeepass sees its own objects (for `custom_data` on Meta)."""

    def __init__(self, element):
        self._element = element


def add_association(entry, window, sequence):
    autotype = entry._element.find("AutoType")
    association = etree.SubElement(autotype, "Association")
    etree.SubElement(association, "Window").text = window
    etree.SubElement(association, "KeystrokeSequence").text = sequence


def add_tombstone(kp, ident, when):
    deleted = kp._xpath("/KeePassFile/Root/DeletedObjects", first=True)
    node = etree.SubElement(deleted, "DeletedObject")
    etree.SubElement(node, "UUID").text = base64.b64encode(uuidlib.UUID(ident).bytes).decode()
    etree.SubElement(node, "DeletionTime").text = "2000-01-01T00:00:00Z"
    holder = find_entry(kp, ident) or find_group(kp, ident)
    holder._set_times_property("LastAccessTime", when)
    node.find("DeletionTime").text = holder._element.find("Times/LastAccessTime").text


def set_history_max_items(kp, count):
    kp._xpath("/KeePassFile/Meta/HistoryMaxItems", first=True).text = str(count)


def set_meta(kp, name, text):
    """Sets Meta child `name` (a path below Meta, e.g. MemoryProtection/ProtectURL), creating it when missing."""
    element = kp._xpath("/KeePassFile/Meta", first=True)
    for part in name.split("/"):
        child = element.find(part)
        if child is None:
            child = etree.SubElement(element, part)
        element = child
    element.text = text


def apply(kp, op, when):
    kind = op["op"]
    if kind == "setField":
        entry = find_entry(kp, op["entry"])
        entry.save_history()
        key, value = op["key"], op["value"]
        standard = {"Title": "title", "UserName": "username", "Password": "password", "URL": "url", "Notes": "notes"}
        if key in standard:
            setattr(entry, standard[key], value)
        else:
            entry.set_custom_property(key, value, protect=op.get("protect", False))
        touch(entry, when)
    elif kind == "removeField":
        entry = find_entry(kp, op["entry"])
        entry.save_history()
        entry.delete_custom_property(op["key"])
        touch(entry, when)
    elif kind == "addEntry":
        group = find_group(kp, op["group"])
        entry = kp.add_entry(group, op["title"], op.get("username", ""), op.get("password", ""), force_creation=True)
        entry._element.find("UUID").text = base64.b64encode(uuidlib.UUID(op["uuid"]).bytes).decode()
        for tag in ("CreationTime", "LastModificationTime", "LastAccessTime", "LocationChanged"):
            entry._set_times_property(tag, when)
    elif kind == "addGroup":
        parent = find_group(kp, op["group"])
        group = kp.add_group(parent, op["name"])
        group._element.find("UUID").text = base64.b64encode(uuidlib.UUID(op["uuid"]).bytes).decode()
        for tag in ("CreationTime", "LastModificationTime", "LastAccessTime", "LocationChanged"):
            group._set_times_property(tag, when)
    elif kind == "moveEntry":
        entry = find_entry(kp, op["entry"])
        kp.move_entry(entry, find_group(kp, op["group"]))
        moved(entry, when)
    elif kind == "moveGroup":
        group = find_group(kp, op["group"])
        kp.move_group(group, find_group(kp, op["to"]))
        moved(group, when)
        if op.get("touch"):
            # As KeePass 2 does: the move bumps the group's LastModificationTime too.
            touch(group, when)
    elif kind == "renameGroup":
        group = find_group(kp, op["group"])
        group.name = op["name"]
        touch(group, when)
    elif kind == "groupNotes":
        group = find_group(kp, op["group"])
        group.notes = op["value"]
        touch(group, when)
    elif kind == "groupCustomData":
        group = find_group(kp, op["group"])
        custom_data(group, op["key"], op.get("value"))
        if op["key"] != "_LAST_MODIFIED":
            touch(group, when)
    elif kind == "entryCustomData":
        entry = find_entry(kp, op["entry"])
        if op["key"] != "_LAST_MODIFIED":
            entry.save_history()
            touch(entry, when)
        custom_data(entry, op["key"], op.get("value"))
    elif kind == "tag":
        entry = find_entry(kp, op["entry"])
        entry.save_history()
        entry.tags = sorted(set(entry.tags or []) | {op["value"]})
        touch(entry, when)
    elif kind == "icon":
        entry = find_entry(kp, op["entry"])
        entry.save_history()
        entry.icon = str(op["value"])
        touch(entry, when)
    elif kind == "attach":
        entry = find_entry(kp, op["entry"])
        entry.save_history()
        binary = kp.add_binary(op["value"].encode())
        entry.add_attachment(binary, op["name"])
        touch(entry, when)
    elif kind == "autoTypeSequence":
        entry = find_entry(kp, op["entry"])
        entry.save_history()
        autotype = entry._element.find("AutoType")
        if autotype.find("DefaultSequence") is None:
            etree.SubElement(autotype, "DefaultSequence")
        entry.autotype_sequence = op["value"]
        touch(entry, when)
    elif kind == "autoTypeWindow":
        entry = find_entry(kp, op["entry"])
        entry.save_history()
        add_association(entry, op["window"], op["value"])
        touch(entry, when)
    elif kind == "trashEntry":
        entry = find_entry(kp, op["entry"])
        if kp._xpath("/KeePassFile/Meta/RecycleBinEnabled", first=True).text == "False":
            # The recycle bin switched off: a deletion is permanent (as in KeePass).
            kp.delete_entry(entry)
        else:
            kp.trash_entry(entry)
            moved(entry, when)
    elif kind == "deleteEntry":
        kp.delete_entry(find_entry(kp, op["entry"]))
    elif kind == "deleteGroup":
        kp.delete_group(find_group(kp, op["group"]))
    elif kind == "restoreEntry":
        entry = find_entry(kp, op["entry"])
        kp.move_entry(entry, find_group(kp, op["group"]))
        moved(entry, when)
    elif kind == "listLiveAsDeleted":
        add_tombstone(kp, op["entry"], when)
    elif kind == "memoryProtection":
        # A settings dialog's change: the flag, and SettingsChanged as KeePass sets it.
        set_meta(kp, "MemoryProtection/" + op["flag"], "True" if op["value"] else "False")
        set_meta(kp, "SettingsChanged", kp._encode_time(when))
    elif kind == "recycleBin":
        set_meta(kp, "RecycleBinEnabled", "True")
        set_meta(kp, "RecycleBinUUID", base64.b64encode(uuidlib.UUID(op["group"]).bytes).decode())
        set_meta(kp, "RecycleBinChanged", kp._encode_time(when))
    elif kind == "historyMaxItems":
        set_history_max_items(kp, op["value"])
        if op.get("settingsChanged"):
            set_meta(kp, "SettingsChanged", kp._encode_time(when))
    elif kind == "metaText":
        # DatabaseName, DatabaseDescription or DefaultUserName, with its own *Changed time and SettingsChanged.
        set_meta(kp, op["field"], op["value"])
        set_meta(kp, op["field"] + "Changed", kp._encode_time(when))
        set_meta(kp, "SettingsChanged", kp._encode_time(when))
    elif kind == "metaSetting":
        # A setting timed by SettingsChanged only (Color, MaintenanceHistoryDays, HistoryMaxSize, ...).
        set_meta(kp, op["field"], str(op["value"]))
        set_meta(kp, "SettingsChanged", kp._encode_time(when))
    elif kind == "recycleBinEnabled":
        set_meta(kp, "RecycleBinEnabled", "True" if op["value"] else "False")
        set_meta(kp, "RecycleBinChanged", kp._encode_time(when))
        set_meta(kp, "SettingsChanged", kp._encode_time(when))
    elif kind == "newRecycleBin":
        # A new group chosen as the recycle bin (the old bin stays, as an ordinary group).
        group = kp.add_group(kp.root_group, op["name"])
        group._element.find("UUID").text = base64.b64encode(uuidlib.UUID(op["uuid"]).bytes).decode()
        for tag in ("CreationTime", "LastModificationTime", "LastAccessTime", "LocationChanged"):
            group._set_times_property(tag, when)
        set_meta(kp, "RecycleBinEnabled", "True")
        set_meta(kp, "RecycleBinUUID", base64.b64encode(uuidlib.UUID(op["uuid"]).bytes).decode())
        set_meta(kp, "RecycleBinChanged", kp._encode_time(when))
        set_meta(kp, "SettingsChanged", kp._encode_time(when))
    elif kind == "customIcon":
        meta = kp._xpath("/KeePassFile/Meta", first=True)
        icons = meta.find("CustomIcons")
        if icons is None:
            icons = etree.SubElement(meta, "CustomIcons")
        icon = etree.SubElement(icons, "Icon")
        etree.SubElement(icon, "UUID").text = base64.b64encode(uuidlib.UUID(op["uuid"]).bytes).decode()
        etree.SubElement(icon, "Data").text = op["data"]
    elif kind == "metaCustomData":
        custom_data(Holder(kp._xpath("/KeePassFile/Meta", first=True)), op["key"], op.get("value"))
    elif kind == "emptyRecycleBin":
        bin_group = kp.recyclebin_group
        if bin_group is not None:
            kp.empty_group(bin_group)
    else:
        raise ValueError("unknown operation " + kind)


def available(kp, op):
    """Whether the objects an operation names are still on this device (an earlier step may have deleted them)."""
    if "entry" in op and find_entry(kp, op["entry"]) is None:
        return False
    for key in ("group", "to"):
        if key in op and find_group(kp, op[key]) is None:
            return False
    if op["op"] == "deleteGroup" and find_group(kp, op["group"]) == kp.root_group:
        return False
    if op["op"] == "moveGroup":
        # Not into itself or one of its own subgroups (the library device skips such a move too).
        group, destination = find_group(kp, op["group"]), find_group(kp, op["to"])
        while destination is not None:
            if destination == group:
                return False
            destination = destination.parentgroup
    return True


def run(job):
    kp = PyKeePass(job["path"], password=job["password"])
    clock = datetime.fromisoformat(job["clock"].replace("Z", "+00:00")).astimezone(timezone.utc)
    for index, op in enumerate(job["ops"]):
        clock += timedelta(seconds=op.get("after", 1))
        try:
            if available(kp, op):
                apply(kp, op, clock)
        except Exception as error:  # noqa: BLE001 - reported with the job and operation, never a value
            raise SystemExit(f"job {job['path']}: operation {index} ({op['op']}): {type(error).__name__}")
    kp.save()


def main():
    for job in json.load(sys.stdin)["jobs"]:
        run(job)


if __name__ == "__main__":
    main()
