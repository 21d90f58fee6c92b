#!/usr/bin/env python3
"""Two or three real Syncthing instances on loopback sharing one empty folder in a full mesh, for a
test that drives everything else itself: the setup of `syncthing_group.py` (its `create_devices` and
`start_group`: Syncthing's default settings, loopback only, nothing outside), no watcher, no edits.

Usage: python3 syncthing_folder.py --root ROOT --devices N [--delay S] [--max-seconds S]

Once every pair is connected it prints one JSON line: {"folders": [each device's copy of the shared
folder], "shortDeviceIDs", "peerAddresses", "nonDefaultFolderSettingNames"} (or {"error": ...}).
Then it answers each line `status` on standard input with one JSON line: per device Syncthing's
state of the folder and the items it still needs ({"folders": [{"state", "needTotalItems", "idle"}]}).
Standard input closed (the test ended, or died), SIGTERM/SIGINT, or --max-seconds passed: every
Syncthing is stopped by its own PID (the process group started for it killed if anything is left).
"""
import argparse
import json
import select
import signal
import sys
import time

import syncthing_group


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--devices", type=int, default=2, choices=(2, 3))
    parser.add_argument("--delay", type=int, default=10, help="Syncthing's fsWatcherDelayS (its default is 10)")
    parser.add_argument("--max-seconds", type=float, default=1800, help="stops by itself after this long")
    arguments = parser.parse_args()
    syncthing_group.take_signals()

    def say(document):
        sys.stdout.write(json.dumps(document) + "\n")
        sys.stdout.flush()

    deadline = time.time() + arguments.max_seconds
    devices = []
    try:
        devices = syncthing_group.create_devices(arguments.root, arguments.devices, arguments.delay)
        started = syncthing_group.start_group(devices)
        say({"folders": [device.folder for device in devices], "shortDeviceIDs": [device.short_id for device in devices],
             "peerAddresses": started["peerAddresses"], "nonDefaultFolderSettingNames": started["nonDefaultFolderSettingNames"]})
        while time.time() < deadline:
            readable, _, _ = select.select([sys.stdin], [], [], min(5.0, max(0.0, deadline - time.time())))
            if not readable:
                continue
            line = sys.stdin.readline()
            if not line:
                break  # standard input closed
            if line.strip() == "status":
                folders = []
                for device in devices:
                    status = device.folder_status()
                    folders.append({"state": status.get("state"), "needTotalItems": status.get("needTotalItems"),
                                    "idle": status.get("state") == "idle" and status.get("needTotalItems", 0) == 0})
                say({"folders": folders})
            else:
                say({"error": f"unknown request {line.strip()[:40]!r}"})
    except (Exception, KeyboardInterrupt) as error:  # said, so that the test shows what went wrong
        try:
            say({"error": f"{type(error).__name__}: {error}"})
        except OSError:
            pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for device in devices:
            device.stop()


if __name__ == "__main__":
    main()
