#!/usr/bin/env python3
"""Two real Syncthing instances on loopback sharing one vault folder, a `mypass-sync watch` on each
device, and rounds of edits made with mypass-sync and keepassxc-cli on one device or on both at
once. Prints one JSON report: the values set, the conflict copies seen, and the figures (copies after
the last edit, time from the last edit to a quiet folder, copies that carried nothing new).

The vault password is the first line of standard input (never in argv). Everything listens on
127.0.0.1 only; discovery, relays, NAT traversal, usage and crash reporting and upgrades are off.
Both Syncthing instances and both watchers are stopped by their own PIDs at the end.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import xml.etree.ElementTree as ET

COPY = re.compile(r"\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}\.")
TEMPORARY = re.compile(r"^(\.syncthing\..*\.tmp|~syncthing~.*\.tmp)$")
# Syncthing keeps the temporary file of a pull it abandoned (the file changed under it: a concurrent
# edit) for reuse by the next pull of that file, up to a day. Untouched this long it is not a transfer.
STALE_AFTER = 5.0


def stale(folder, name):
    try:
        return time.time() - os.stat(os.path.join(folder, name)).st_mtime >= STALE_AFTER
    except OSError:
        return True


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Device:
    """One device: a Syncthing home, a synced folder with the vault, a state directory, a watcher."""

    def __init__(self, name, root):
        self.name = name
        self.home = os.path.join(root, f"syncthing-{name}")
        self.folder = os.path.join(root, f"folder-{name}")
        self.state = os.path.join(root, f"state-{name}")
        self.vault = os.path.join(self.folder, "vault.kdbx")
        self.gui_port = free_port()
        self.listen_port = free_port()
        self.syncthing = None
        self.watcher = None
        self.watch_log = os.path.join(root, f"watch-{name}.log")
        self.syncthing_log = os.path.join(root, f"syncthing-{name}.log")
        os.makedirs(self.folder)
        os.makedirs(os.path.join(self.folder, ".stfolder"))
        result = subprocess.run(["syncthing", "generate", f"--home={self.home}", "--no-default-folder", "--skip-port-probing"],
                                capture_output=True, text=True, check=True)
        found = re.search(r"Device ID: ([A-Z0-9-]{63})", result.stdout + result.stderr)
        if not found:
            raise RuntimeError(f"syncthing generate printed no device ID: {result.stdout} {result.stderr}")
        self.device_id = found.group(1)
        self.api_key = ET.parse(os.path.join(self.home, "config.xml")).getroot().find("gui/apikey").text

    def configure(self, peer, delay):
        """Loopback only, nothing outside; one folder shared with `peer`, watcher delay `delay` s."""
        path = os.path.join(self.home, "config.xml")
        tree = ET.parse(path)
        root = tree.getroot()
        gui = root.find("gui")
        gui.find("address").text = f"127.0.0.1:{self.gui_port}"
        options = root.find("options")
        settings = {
            "listenAddress": f"tcp://127.0.0.1:{self.listen_port}",
            "globalAnnounceEnabled": "false", "localAnnounceEnabled": "false", "relaysEnabled": "false",
            "natEnabled": "false", "urAccepted": "-1", "urSeen": "3", "autoUpgradeIntervalH": "0",
            "crashReportingEnabled": "false", "startBrowser": "false", "announceLANAddresses": "false",
        }
        for key, value in settings.items():
            for old in options.findall(key):
                options.remove(old)
            ET.SubElement(options, key).text = value
        for old in root.findall("device"):
            if old.get("id") != self.device_id:
                root.remove(old)
        device = ET.SubElement(root, "device", id=peer.device_id, name=peer.name, compression="metadata",
                               introducer="false", skipIntroductionRemovals="false", introducedBy="")
        ET.SubElement(device, "address").text = f"tcp://127.0.0.1:{peer.listen_port}"
        ET.SubElement(device, "paused").text = "false"
        ET.SubElement(device, "autoAcceptFolders").text = "false"
        folder = ET.Element("folder", id="vault", label="vault", path=self.folder, type="sendreceive",
                            rescanIntervalS="3600", fsWatcherEnabled="true", fsWatcherDelayS=str(delay),
                            ignorePerms="false", autoNormalize="true")
        for device_id in (self.device_id, peer.device_id):
            ET.SubElement(folder, "device", id=device_id, introducedBy="")
        ET.SubElement(folder, "maxConflicts").text = "-1"  # keep every copy: they are what is counted
        root.insert(0, folder)
        tree.write(path)

    def start_syncthing(self):
        environment = dict(os.environ, STNOUPGRADE="1", STNODEFAULTFOLDER="1", STNORESTART="1")
        log = open(self.syncthing_log, "w")
        self.syncthing = subprocess.Popen(
            ["syncthing", "serve", f"--home={self.home}", "--no-browser", "--no-restart", "--no-upgrade",
             f"--gui-address=127.0.0.1:{self.gui_port}"],
            stdout=log, stderr=subprocess.STDOUT, env=environment, start_new_session=True)

    def rest(self, path):
        request = urllib.request.Request(f"http://127.0.0.1:{self.gui_port}{path}", headers={"X-API-Key": self.api_key})
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read())

    def connected_to(self, peer):
        try:
            connection = self.rest("/rest/system/connections")["connections"].get(peer.device_id, {})
        except OSError:
            return None
        return connection.get("address") if connection.get("connected") else None

    def folder_idle(self):
        try:
            status = self.rest("/rest/db/status?folder=vault")
        except OSError:
            return False
        return status.get("state") == "idle" and status.get("needTotalItems", 0) == 0

    def start_watcher(self, binary, password, extra):
        log = open(self.watch_log, "w")
        self.watcher = subprocess.Popen(
            [binary, "watch", "--json", "--password-stdin", "--state-dir", self.state, self.vault] + extra,
            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
        self.watcher.stdin.write((password + "\n").encode())
        self.watcher.stdin.close()

    def events(self):
        events = []
        with open(self.watch_log) as log:
            for line in log:
                try:
                    events.append(json.loads(line))
                except ValueError:
                    pass
        return events

    def names(self):
        try:
            return os.listdir(self.folder)
        except OSError:
            return []

    def stop(self):
        for process, stop_signal in ((self.watcher, signal.SIGINT), (self.syncthing, signal.SIGTERM)):
            if process is None or process.poll() is not None:
                continue
            process.send_signal(stop_signal)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class FolderMonitor(threading.Thread):
    """Polls both folders every 50 ms: when each conflict copy first appeared, when any vault, copy
    or Syncthing temporary last changed."""

    def __init__(self, devices):
        super().__init__(daemon=True)
        self.devices = devices
        self.copies = {}  # name -> first seen (time)
        self.last_activity = time.time()
        self.snapshot = None
        self.running = True
        self.lock = threading.Lock()

    def state(self):
        state = []
        for device in self.devices:
            for name in sorted(device.names()):
                if name == "vault.kdbx" or COPY.search(name) or TEMPORARY.match(name):
                    try:
                        info = os.stat(os.path.join(device.folder, name))
                        state.append((device.name, name, info.st_ino, info.st_mtime_ns, info.st_size))
                    except OSError:
                        pass
        return state

    def run(self):
        while self.running:
            now = time.time()
            state = self.state()
            with self.lock:
                for _, name, *_ in state:
                    if COPY.search(name) and not TEMPORARY.match(name) and name not in self.copies:
                        self.copies[name] = now
                if state != self.snapshot:
                    self.snapshot = state
                    self.last_activity = now
            time.sleep(0.05)

    def copies_since(self, moment):
        with self.lock:
            return sorted(name for name, seen in self.copies.items() if seen >= moment)


def wait_for(condition, timeout, what, describe=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}" + (f"; {describe()}" if describe else ""))


def titles(device, password):
    """Entry titles of the device's vault, as keepassxc-cli lists them (the root group)."""
    result = subprocess.run(["keepassxc-cli", "ls", "-q", device.vault], input=password + "\n", capture_output=True, text=True,
                            env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    return [line for line in result.stdout.splitlines() if line and not line.endswith("/")]



def vault_bytes(device):
    """The device's vault, or None while it is absent: Syncthing replaces a file that lost a conflict
    in two renames (the file to its conflict copy, then the new version in), so there is a moment
    without it."""
    try:
        with open(device.vault, "rb") as file:
            return file.read()
    except FileNotFoundError:
        return None


def same_vaults(devices):
    first = vault_bytes(devices[0])
    return first is not None and first == vault_bytes(devices[1])

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--vault", required=True)
    parser.add_argument("--delay", type=int, required=True, help="Syncthing's fsWatcherDelayS")
    parser.add_argument("--rounds", type=int, required=True)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--quiet-timeout", type=float, default=120)
    parser.add_argument("--copy-grace", help="passed to mypass-sync watch (default: its own)")
    arguments = parser.parse_args()
    password = sys.stdin.readline().rstrip("\n")
    rng = random.Random(arguments.seed)
    devices = [Device("alpha", arguments.root), Device("beta", arguments.root)]
    report = {"delay": arguments.delay, "rounds": arguments.rounds, "seed": arguments.seed, "edits": [], "folders": [],
              "errors": []}
    monitor = None
    try:
        devices[0].configure(devices[1], arguments.delay)
        devices[1].configure(devices[0], arguments.delay)
        shutil.copyfile(arguments.vault, devices[0].vault)
        os.chmod(devices[0].vault, 0o600)
        for device in devices:
            device.start_syncthing()
        wait_for(lambda: all(device.connected_to(other) for device, other in ((devices[0], devices[1]), (devices[1], devices[0]))),
                 60, "the two Syncthing instances to connect")
        report["peerAddresses"] = [devices[0].connected_to(devices[1]), devices[1].connected_to(devices[0])]
        wait_for(lambda: same_vaults(devices),
                 60, "the vault to reach the second device")
        for device in devices:
            device.start_watcher(arguments.binary, password,
                                 ["--copy-grace", arguments.copy_grace] if arguments.copy_grace is not None else [])
        monitor = FolderMonitor(devices)
        monitor.start()
        time.sleep(1.5)

        counter = 0

        def edit(device, round_number):
            nonlocal counter
            counter += 1
            value = f"{device.name}-r{round_number}-v{counter}"
            names = titles(device, password)
            use_keepassxc = rng.random() < 0.35
            if not names or rng.random() < 0.2:
                title = f"E{counter}-{device.name}"
                field, command = "UserName", ["add", device.vault, title, "-u", value]
            else:
                title = rng.choice(names[-4:])
                field, option = rng.choice([("UserName", "-u"), ("URL", "--url"), ("Notes", "--notes")])
                command = ["edit", device.vault, title, option, value]
            if use_keepassxc:
                result = subprocess.run(["keepassxc-cli", command[0], "-q"] + command[1:], input=password + "\n",
                                        capture_output=True, text=True, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
                tool = "keepassxc-cli"
            else:
                result = subprocess.run([arguments.binary, command[0], "--password-stdin", "--state-dir", device.state] + command[1:],
                                        input=password + "\n", capture_output=True, text=True)
                tool = "mypass-sync"
            record = {"device": device.name, "tool": tool, "title": title, "field": field, "value": value,
                      "round": round_number, "status": result.returncode}
            if result.returncode != 0:
                record["stderr"] = result.stderr[-300:]
            report["edits"].append(record)

        def concurrent(round_number):
            threads = [threading.Thread(target=edit, args=(device, round_number)) for device in devices]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()

        def describe():
            parts = []
            for device in devices:
                try:
                    status = device.rest("/rest/db/status?folder=vault")
                    state = f"{status.get('state')} need {status.get('needTotalItems')}"
                except OSError as error:
                    state = str(error)
                parts.append(f"{device.name}: {sorted(device.names())}, Syncthing {state}")
            same = same_vaults(devices)
            return "; ".join(parts) + f"; same vault: {same}"

        def quiet_for(seconds):
            with monitor.lock:
                idle = time.time() - monitor.last_activity >= seconds
            names = [name for device in devices for name in device.names()
                     if (COPY.search(name) and not TEMPORARY.match(name)) or (TEMPORARY.match(name) and not stale(device.folder, name))]
            same = same_vaults(devices)
            return idle and not names and same and all(device.folder_idle() for device in devices)

        # Random rounds: one device, the other, or both at once; waits shorter and longer than the delay.
        for round_number in range(arguments.rounds):
            choice = rng.random()
            if choice < 0.4:
                concurrent(round_number)
            else:
                edit(devices[0] if choice < 0.7 else devices[1], round_number)
            time.sleep(rng.uniform(0.2, 2.5) * max(1, arguments.delay))
        # Settle, then one last simultaneous edit on both devices: a real conflict whose aftermath is measured.
        settle_started = time.time()
        wait_for(lambda: quiet_for(arguments.delay + 4), arguments.quiet_timeout + 60, "the folder to settle before the last round",
                 describe)
        report["settleBeforeLastRound"] = round(time.time() - settle_started, 1)
        last_edit = time.time()
        concurrent(arguments.rounds)
        last_edit = max(last_edit, time.time())
        quiet_after = arguments.delay + 5
        try:
            wait_for(lambda: quiet_for(quiet_after), arguments.quiet_timeout, "the folder to be quiet after the last edit", describe)
            report["quiet"] = True
        except RuntimeError as error:
            report["quiet"] = False
            report["errors"].append(str(error))
        with monitor.lock:
            report["secondsFromLastEditToQuiet"] = round(max(0.0, monitor.last_activity - last_edit), 2)
            last_copy = max([seen for seen in monitor.copies.values() if seen >= last_edit], default=last_edit)
            report["secondsFromLastCopyToQuiet"] = round(max(0.0, monitor.last_activity - last_copy), 2)
        report["copiesAfterLastEdit"] = monitor.copies_since(last_edit)
        monitor.running = False
        monitor.join()
        report["copies"] = sorted(monitor.copies)
        # Per copy: what each device's watcher did with it.
        handled = {}
        for device in devices:
            for event in device.events():
                kind = event.get("kind")
                report.setdefault("eventCounts", {}).setdefault(device.name, {}).setdefault(kind, 0)
                report["eventCounts"][device.name][kind] += 1
                if kind in ("conflictCopyMerged", "conflictCopyRetired"):
                    name = os.path.basename(event["detail"].split(" -> ")[0])
                    handled.setdefault(name, []).append(kind)
                if kind in ("error", "refused", "unreadable", "keyChanged"):
                    report["errors"].append(f"{device.name}: {kind}: {event.get('detail')}")
        report["copiesHandled"] = handled
        report["copiesWithNothingNew"] = sorted(name for name, kinds in handled.items() if "conflictCopyMerged" not in kinds)
        report["leftInFolders"] = {device.name: sorted(name for name in device.names()
                                                       if name not in ("vault.kdbx", ".stfolder")
                                                       and not (TEMPORARY.match(name) and stale(device.folder, name)))
                                   for device in devices}
        report["staleTemporaries"] = sorted(f"{device.name}/{name}" for device in devices for name in device.names()
                                            if TEMPORARY.match(name) and stale(device.folder, name))
        report["vaultWrites"] = {device.name: report["eventCounts"].get(device.name, {}).get("ownWriteIgnored", 0) for device in devices}
        report["folders"] = [device.folder for device in devices]
        report["states"] = [device.state for device in devices]
        with open(devices[0].syncthing_log) as log_a, open(devices[1].syncthing_log) as log_b:
            text = log_a.read() + log_b.read()
        report["syncthingNotRescanned"] = text.count("modified but not rescanned")
    except Exception as error:  # reported, so the test shows what went wrong
        report["errors"].append(f"{type(error).__name__}: {error}")
        if monitor is not None:
            monitor.running = False
            report["copies"] = sorted(monitor.copies)
    finally:
        for device in devices:
            device.stop()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
