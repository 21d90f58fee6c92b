#!/usr/bin/env python3
"""N real Syncthing instances (2 or 3) on loopback sharing one vault folder in a full mesh, a
`mypass-sync watch --json` on each device, and rounds of edits made with mypass-sync and keepassxc-cli
on one device, several or all at once. Prints one JSON report that RealSyncthingTests.swift checks:
the values set (each with its time), the conflict copies seen (when, on which device, with which
SHA-256), per round the real conflicts (k devices editing at once: k - 1) and the copies that
appeared (`copiesPerConflict`), the watchers' events counted by kind per device (`eventCounts`, from
the JSON lines of each watcher's log), the watcher writes whose change list is empty (`emptyWrites`:
`restored` or `conflictCopyMerged` with "changes": []) and every `restored` event (`restores`), each
device's final vault SHA-256, the values missing from the final vault as keepassxc-cli reads it, and
the time from the last edit and the last copy to a quiet folder.

Patterns (--pattern):
  random       --rounds rounds; a round edits on one device, or on several or all at once, then waits
               0.2-2.5 x the delay (picked by --seed and drawn before any edit runs, so a seed replays
               the same plan; which entry an edit picks, one of the two edited least so far, depends
               on what the device's vault holds then); then the folder settles and a last round edits
               on every device at once, whose aftermath is measured.
  three-round  round 1: every device (or the first --first-round-devices) changes the password of
               the same entry at once; round 2: device A edits another entry; round 3: device B adds
               an entry. The folder settles (or --settle-timeout passes) after each round.

Syncthing runs at its default settings except for what keeps it on 127.0.0.1 and off the Internet:
listen address and GUI/REST API on 127.0.0.1:PORT, global and local discovery, relays, NAT traversal,
LAN address announcement, usage and crash reporting, upgrades and the browser off. The peers and the
folder are copies of the <defaults> that `syncthing generate` writes, so that rescanIntervalS stays
3600, maxConflicts 10, the filesystem watcher on, and so on; the only folder setting changed is
fsWatcherDelayS, set by --delay (10 is the default). The report's `nonDefaultFolderSettings` is what
Syncthing's REST API says differs from its folder defaults. Of each pair of devices only the first
dials the other (the second has its address as "dynamic", which with discovery off finds nothing):
when both dial at once, Syncthing 1.19 drops one connection only after a 20 s Hello timeout. The
devices that are dialled start first and answer on their REST API before the ones that dial them
start: a first dial that finds nobody listening is retried only after Syncthing's 60 s reconnect
interval.

The vault password is the first line of standard input (never in argv). Every loop and wait is
bounded in count and time. Every process this starts is stopped by its own PID at the end, also on
an exception or SIGTERM/SIGINT (the test runner's blocked-signal mask is cleared first so that they
arrive); `syncthing serve` runs as a monitor process and a child, in a session of their own whose
process group is killed if anything of it is left. If this process dies first, the kernel sends the
watchers SIGKILL and Syncthing's monitor SIGTERM, which it passes on to its child.
"""
import argparse
import calendar
import copy
import ctypes
import hashlib
import json
import os
import random
import re
import signal
import shutil
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
NAMES = ["alpha", "beta", "gamma"]
# Watcher events that write the vault: a write whose change list is empty changed nothing a user
# can see, and its new version is a new conflict on the other devices.
WRITING_KINDS = ("restored", "conflictCopyMerged")
PROBLEM_KINDS = ("error", "refused", "unreadable", "keyChanged")
TOOL_TIMEOUT = 60  # seconds for one keepassxc-cli or mypass-sync edit
KEEPASSXC_ENV = dict(os.environ, QT_QPA_PLATFORM="offscreen")
STARTED = time.time()


# The edits and listings running now (from several threads): killed if the run ends under them.
RUNNING = set()
RUNNING_LOCK = threading.Lock()


def run_tool(command, stdin, environment=None, timeout=TOOL_TIMEOUT):
    """(status, stdout, stderr) of a keepassxc-cli or mypass-sync run; killed after `timeout` s
    (status -1)."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
    with RUNNING_LOCK:
        RUNNING.add(process)
    try:
        output, errors = process.communicate(stdin.encode(), timeout=timeout)
        return process.returncode, output.decode(errors="replace"), errors.decode(errors="replace")
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return -1, "", f"timed out after {timeout} s"
    finally:
        with RUNNING_LOCK:
            RUNNING.discard(process)


def kill_running_tools():
    with RUNNING_LOCK:
        running = list(RUNNING)
    for process in running:
        try:
            process.kill()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass


def since_start(moment):
    return round(moment - STARTED, 2)


def stale(folder, name):
    try:
        return time.time() - os.stat(os.path.join(folder, name)).st_mtime >= STALE_AFTER
    except OSError:
        return True


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def die_with_parent(number):
    """For a child, before exec: signal `number` when this script dies (PR_SET_PDEATHSIG)."""
    return lambda: ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, number)


def dials(device, peer):
    """Whether `device` connects to `peer` (the other way round, `peer` waits for it)."""
    return NAMES.index(device.name) < NAMES.index(peer.name)


def sha256_of(path):
    try:
        with open(path, "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()
    except OSError:
        return None


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
                                capture_output=True, text=True, check=True, timeout=60)
        found = re.search(r"Device ID: ([A-Z0-9-]{63})", result.stdout + result.stderr)
        if not found:
            raise RuntimeError(f"syncthing generate printed no device ID: {result.stdout} {result.stderr}")
        self.device_id = found.group(1)
        self.short_id = self.device_id[:7]
        self.api_key = ET.parse(os.path.join(self.home, "config.xml")).getroot().find("gui/apikey").text

    def configure(self, peers, delay):
        """Loopback only, nothing outside; one folder shared with every peer, watcher delay `delay` s."""
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
        # The peers and the folder are copies of the defaults `syncthing generate` wrote (<defaults>),
        # so that every setting not named here is Syncthing's default. Only the device earlier in the
        # list dials (its peer's address); the later one waits for it ("dynamic", which with discovery
        # off finds nothing): when both dial at once Syncthing 1.19 drops one connection only after its
        # 20 s Hello timeout, which would only slow the start.
        defaults = root.find("defaults")
        for old in root.findall("device"):
            if old.get("id") != self.device_id:
                root.remove(old)
        for peer in peers:
            device = copy.deepcopy(defaults.find("device"))
            device.set("id", peer.device_id)
            device.set("name", peer.name)
            device.find("address").text = f"tcp://127.0.0.1:{peer.listen_port}" if dials(self, peer) else "dynamic"
            root.append(device)
        for old in root.findall("folder"):
            root.remove(old)
        folder = copy.deepcopy(defaults.find("folder"))
        folder.set("id", "vault")
        folder.set("label", "vault")
        folder.set("path", self.folder)
        folder.set("fsWatcherDelayS", str(delay))
        for old in folder.findall("device"):
            folder.remove(old)
        for position, device_id in enumerate([self.device_id] + [peer.device_id for peer in peers]):
            member = ET.Element("device", id=device_id, introducedBy="")
            ET.SubElement(member, "encryptionPassword")
            folder.insert(position, member)
        root.insert(0, folder)
        tree.write(path)

    def start_syncthing(self):
        environment = dict(os.environ, STNOUPGRADE="1", STNODEFAULTFOLDER="1", STNORESTART="1")
        with open(self.syncthing_log, "w") as log:
            self.syncthing = subprocess.Popen(
                ["syncthing", "serve", f"--home={self.home}", "--no-browser", "--no-restart", "--no-upgrade",
                 f"--gui-address=127.0.0.1:{self.gui_port}"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=environment, start_new_session=True,
                preexec_fn=die_with_parent(signal.SIGTERM))  # the monitor process passes SIGTERM on to Syncthing

    def answers(self):
        """Whether this instance's REST API answers (it then listens for its peers too)."""
        try:
            return self.rest("/rest/system/ping") is not None
        except Exception:
            return False

    def rest(self, path):
        request = urllib.request.Request(f"http://127.0.0.1:{self.gui_port}{path}", headers={"X-API-Key": self.api_key})
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read())

    def connected_to(self, peer):
        try:
            connection = self.rest("/rest/system/connections")["connections"].get(peer.device_id, {})
        except (OSError, ValueError):
            return None
        return connection.get("address") if connection.get("connected") else None

    def folder_status(self):
        try:
            return self.rest("/rest/db/status?folder=vault")
        except (OSError, ValueError):
            return {}

    def folder_idle(self):
        status = self.folder_status()
        return status.get("state") == "idle" and status.get("needTotalItems", 0) == 0

    def non_default_folder_settings(self):
        """The folder's settings that differ from Syncthing's own folder defaults (as its REST API says)."""
        folder = self.rest("/rest/config/folders/vault")
        defaults = self.rest("/rest/config/defaults/folder")
        return {key: value for key, value in folder.items()
                if key not in ("id", "label", "path", "devices") and defaults.get(key) != value}

    def start_watcher(self, binary, password, extra, daemon=False):
        if daemon:
            return self.start_daemon(binary, password, extra)
        with open(self.watch_log, "w") as log:
            self.watcher = subprocess.Popen(
                [binary, "watch", "--json", "--password-stdin", "--state-dir", self.state, self.vault] + extra,
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent(signal.SIGKILL))
        self.watcher.stdin.write((password + "\n").encode())
        self.watcher.stdin.close()

    def start_daemon(self, binary, password, extra):
        """`mypass-sync daemon run` instead of `watch`: the vault added to a configuration of this
        device's own with a password command reading a 0600 file, the daemon's socket in a runtime
        folder of its own, no session bus (notices are dropped, said once)."""
        root = os.path.dirname(self.home)
        environment = dict(os.environ, XDG_CONFIG_HOME=os.path.join(root, f"config-{self.name}"),
                           XDG_RUNTIME_DIR=os.path.join(root, f"run-{self.name}"), DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent")
        os.makedirs(environment["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
        password_file = os.path.join(root, f"password-{self.name}")
        with open(os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as file:
            file.write(password + "\n")
        subprocess.run([binary, "daemon", "add", self.vault, "--password-command", f"cat '{password_file}'"] + extra,
                       env=environment, capture_output=True, check=True, timeout=TOOL_TIMEOUT)
        with open(self.watch_log, "w") as log:
            self.watcher = subprocess.Popen([binary, "daemon", "run", "--json", "--state-dir", self.state], env=environment,
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            preexec_fn=die_with_parent(signal.SIGKILL))

    def watch_lines(self):
        """(event, raw line) for every JSON line of the watcher's log; (None, line) for anything else."""
        lines = []
        try:
            with open(self.watch_log, errors="replace") as log:
                for line in log:
                    line = line.rstrip("\n")
                    try:
                        event = json.loads(line)
                        lines.append((event if isinstance(event, dict) else None, line))
                    except ValueError:
                        lines.append((None, line))
        except OSError:
            pass
        return lines

    def events(self):
        return [event for event, _ in self.watch_lines() if event is not None]

    def names(self):
        try:
            return os.listdir(self.folder)
        except OSError:
            return []

    def stop(self):
        """The watcher, then Syncthing: `syncthing serve` is a monitor process and the Syncthing it
        started, in the session (process group) started for it, whose members are killed if any
        is left."""
        for process, stop_signal in ((self.watcher, signal.SIGINT), (self.syncthing, signal.SIGTERM)):
            if process is None:
                continue
            if process.poll() is None:
                try:
                    process.send_signal(stop_signal)
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=15)
                except OSError:
                    pass
            if process is self.syncthing:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except OSError:
                    pass


class FolderMonitor(threading.Thread):
    """Polls every folder every 50 ms: when each conflict copy first appeared on each device (and its
    hash there), when any vault, copy or Syncthing temporary last changed."""

    def __init__(self, devices, deadline):
        super().__init__(daemon=True)
        self.devices = devices
        self.deadline = deadline
        self.copies = {}  # name -> first seen on any device (time)
        self.seen_on = {}  # name -> {device: {"at": seconds since start, "sha256": ...}}
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
        while self.running and time.time() < self.deadline:
            now = time.time()
            state = self.state()
            with self.lock:
                for device_name, name, *_ in state:
                    if not COPY.search(name) or TEMPORARY.match(name):
                        continue
                    if name not in self.copies:
                        self.copies[name] = now
                    per_device = self.seen_on.setdefault(name, {})
                    if device_name not in per_device:
                        folder = next(device.folder for device in self.devices if device.name == device_name)
                        digest = sha256_of(os.path.join(folder, name))
                        if digest is not None:
                            per_device[device_name] = {"at": since_start(now), "sha256": digest}
                if state != self.snapshot:
                    self.snapshot = state
                    self.last_activity = now
            time.sleep(0.05)

    def copies_between(self, start, end=None):
        with self.lock:
            return sorted(name for name, seen in self.copies.items() if seen >= start and (end is None or seen < end))

    def last_copy_between(self, start, end=None):
        with self.lock:
            return max((seen for seen in self.copies.values() if seen >= start and (end is None or seen < end)), default=None)


def wait_for(condition, timeout, what, describe=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}" + (f"; {describe()}" if describe else ""))


def create_devices(root, count, delay):
    """`count` devices under `root` (Syncthing homes generated, folder-NAME shared by all in a full
    mesh, watcher delay `delay` s), configured but not started."""
    devices = [Device(name, root) for name in NAMES[:count]]
    for device in devices:
        device.configure([peer for peer in devices if peer is not device], delay)
    return devices


def start_group(devices):
    """Starts Syncthing on every device (those dialled first) and waits until every pair is
    connected; what the report says of the connections and of the folder's settings."""
    for device in reversed(devices):
        device.start_syncthing()
        wait_for(lambda: device.answers(), 30, f"Syncthing on {device.name} to answer")
    pairs = [(device, peer) for device in devices for peer in devices if peer is not device]
    wait_for(lambda: all(device.connected_to(peer) for device, peer in pairs), 130, "the Syncthing instances to connect")
    non_default = devices[0].non_default_folder_settings()
    return {"peerAddresses": [device.connected_to(peer) for device, peer in pairs],
            "nonDefaultFolderSettings": non_default, "nonDefaultFolderSettingNames": sorted(non_default)}


def entry_paths(device, password):
    """The paths of the entries in the device's vault, as keepassxc-cli lists them (every group)."""
    _, output, _ = run_tool(["keepassxc-cli", "ls", "-q", "-R", "-f", device.vault], password + "\n", KEEPASSXC_ENV)
    return [line for line in output.splitlines() if line and not line.endswith("/") and not line.startswith("Recycle Bin/")]


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
    return first is not None and all(vault_bytes(device) == first for device in devices[1:])


def entries_in(vault, password):
    """[(fields, [(fields, unix time last modified) for each version in its history])] for every entry
    outside a history, via keepassxc-cli's XML export, and the vault's HistoryMaxItems; None if it
    cannot be exported."""
    _, output, _ = run_tool(["keepassxc-cli", "export", "-q", "-f", "xml", vault], password + "\n", KEEPASSXC_ENV)
    try:
        root = ET.fromstring(output)
    except ET.ParseError:
        return None, None

    def fields(entry):
        return {string.findtext("Key"): string.findtext("Value") or "" for string in entry.findall("String")}

    def modified(entry):
        text = entry.findtext("Times/LastModificationTime") or ""
        try:
            return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))
        except ValueError:
            return None

    entries = []
    for group in root.iter("Group"):
        for entry in group.findall("Entry"):
            entries.append((fields(entry), [(fields(old), modified(old)) for old in entry.findall("History/Entry")]))
    limit = root.findtext("Meta/HistoryMaxItems")
    return entries, int(limit) if limit and limit.lstrip("-").isdigit() else None


def take_signals():
    """The test runner's threads block most signals and a child inherits that mask: cleared, so that
    SIGTERM and SIGINT reach this script (and its finally blocks) as KeyboardInterrupt and Syncthing
    stops when asked."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    def interrupted(number, _frame):
        raise KeyboardInterrupt(f"signal {number}")
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--vault", required=True)
    parser.add_argument("--devices", type=int, default=2, choices=(2, 3))
    parser.add_argument("--delay", type=int, required=True, help="Syncthing's fsWatcherDelayS (its default is 10)")
    parser.add_argument("--pattern", choices=("random", "three-round"), default="random")
    parser.add_argument("--rounds", type=int, default=12, help="random rounds before the last one (pattern random)")
    parser.add_argument("--first-round-devices", type=int, choices=(2, 3), help="devices changing the password in round 1 (three-round; default all)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--quiet-timeout", type=float, default=120, help="seconds to wait for a quiet folder after the last edit")
    parser.add_argument("--settle-timeout", type=float, help="seconds to wait for a quiet folder before a round (default 4 x delay + 50)")
    parser.add_argument("--copy-grace", help="passed to mypass-sync watch (default: its own)")
    parser.add_argument("--daemon", action="store_true", help="run `mypass-sync daemon run` on each device instead of `watch`")
    arguments = parser.parse_args()
    take_signals()

    password = sys.stdin.readline().rstrip("\n")
    rng = random.Random(arguments.seed)
    settle_timeout = arguments.settle_timeout if arguments.settle_timeout is not None else 4 * arguments.delay + 50
    # Never longer than this, whatever happens (each wait below is bounded too).
    hard_deadline = time.time() + 120 + (arguments.rounds + 4) * (settle_timeout + 2.5 * max(1, arguments.delay) + 2 * TOOL_TIMEOUT) \
        + arguments.quiet_timeout
    devices = []
    report = {"devices": arguments.devices, "delay": arguments.delay, "pattern": arguments.pattern,
              "rounds": arguments.rounds if arguments.pattern == "random" else 3, "seed": arguments.seed, "edits": [], "folders": [],
              "errors": [], "roundLog": [], "emptyWrites": [], "restores": [], "copiesReportedLeft": []}
    monitor = None
    try:
        devices = create_devices(arguments.root, arguments.devices, arguments.delay)
        shutil.copyfile(arguments.vault, devices[0].vault)
        os.chmod(devices[0].vault, 0o600)
        report.update(start_group(devices))
        wait_for(lambda: same_vaults(devices), 60, "the vault to reach every device")
        for device in devices:
            device.start_watcher(arguments.binary, password,
                                 ["--copy-grace", arguments.copy_grace] if arguments.copy_grace is not None else [], daemon=arguments.daemon)
        monitor = FolderMonitor(devices, hard_deadline)
        monitor.start()
        wait_for(lambda: all(any(event.get("kind") == "baseRecorded" for event in device.events()) for device in devices), 30,
                 "every watcher to record its base")
        report["secondsToStart"] = round(time.time() - STARTED, 1)

        counter = 0
        counter_lock = threading.Lock()
        edit_counts = {}  # title -> edits planned on it

        def next_number():
            nonlocal counter
            with counter_lock:
                counter += 1
                return counter

        def edit(device, round_number, plan):
            """One edit as `plan` says: tool, action (edit/add), field, which title (or a new one)."""
            number = next_number()
            value = f"{device.name}-r{round_number}-v{number}"
            if plan["action"] == "add":
                path = title = f"E{number}-{device.name}"
            elif plan.get("path"):
                path, title = plan["path"], plan["path"].split("/")[-1]
            else:
                paths = entry_paths(device, password)
                if not paths:
                    path = title = f"E{number}-{device.name}"
                    plan = dict(plan, action="add", field="UserName")
                else:
                    # One of the two entries edited least so far: the entries' histories (10 versions
                    # in the fixture) keep every value set, so that a value missing is a value lost.
                    with counter_lock:
                        candidates = sorted(paths, key=lambda candidate: (edit_counts.get(candidate.split("/")[-1], 0), paths.index(candidate)))[:2]
                        path = candidates[int(plan["pick"] * len(candidates)) % len(candidates)]
                        edit_counts[path.split("/")[-1]] = edit_counts.get(path.split("/")[-1], 0) + 1
                    title = path.split("/")[-1]
            field = plan["field"]
            options = {"UserName": "-u", "URL": "--url", "Notes": "--notes"}
            if plan["tool"] == "keepassxc-cli":
                command = ["keepassxc-cli", plan["action"], "-q", device.vault, path]
                stdin = password + "\n"
                if field == "Password":
                    command.append("-p")
                    stdin += f"{value}\n{value}\n"
                else:
                    command += [options[field], value]
                environment = KEEPASSXC_ENV
            else:
                command = [arguments.binary, plan["action"], "--password-stdin", "--state-dir", device.state, device.vault, path]
                stdin = password + "\n"
                if field == "Password":
                    command.append("--entry-password-stdin")
                    stdin += value + "\n"
                else:
                    command += [options[field], value]
                environment = None
            started = time.time()
            status, _, stderr = run_tool(command, stdin, environment)
            retried = False
            if status != 0 and plan["action"] == "edit" and ("no entry at" in stderr or "Could not find entry" in stderr):
                # The entry is missing for a moment: another device's version replaced the file and
                # this device's watcher has not put back what it lacked yet (its debounce and merge).
                # A person would look again; so does the test, once, two seconds later.
                time.sleep(2)
                retried = True
                status, _, stderr = run_tool(command, stdin, environment)
            record = {"device": device.name, "tool": plan["tool"], "action": plan["action"], "title": title, "path": path,
                      "field": field, "value": value, "round": round_number, "status": status, "at": since_start(started),
                      "unixTime": round(started, 3), "retried": retried}
            if status != 0:
                record["stderr"] = stderr[-300:]
            report["edits"].append(record)

        def run_round(round_number, plans, settled_before):
            """Edits on several devices at once (one thread each); returns the round's log record."""
            started = time.time()
            threads = [threading.Thread(target=edit, args=(device, round_number, plan), daemon=True) for device, plan in plans]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(TOOL_TIMEOUT * 2 + 5)
            record = {"round": round_number, "devices": [device.name for device, _ in plans], "start": started,
                      "editsDone": time.time(), "settledBefore": settled_before}
            report["roundLog"].append(record)
            return record

        def describe():
            parts = []
            for device in devices:
                status = device.folder_status()
                parts.append(f"{device.name}: {sorted(device.names())}, Syncthing {status.get('state')} need {status.get('needTotalItems')}")
            return "; ".join(parts) + f"; same vault: {same_vaults(devices)}"

        def quiet_for(seconds):
            with monitor.lock:
                idle = time.time() - monitor.last_activity >= seconds
            if not idle:
                return False
            names = [name for device in devices for name in device.names()
                     if (COPY.search(name) and not TEMPORARY.match(name)) or (TEMPORARY.match(name) and not stale(device.folder, name))]
            return not names and same_vaults(devices) and all(device.folder_idle() for device in devices)

        def settle(seconds, timeout, what, record=None):
            """Waits for `seconds` without activity (bounded by `timeout`); True if it came. The round
            `record` notes whether it came and the time of the last activity before it."""
            try:
                wait_for(lambda: quiet_for(seconds), timeout, what, describe)
                settled = True
            except RuntimeError as error:
                report["errors"].append(str(error))
                settled = False
            if record is not None:
                record["quietAfter"] = settled
                with monitor.lock:
                    record["lastActivity"] = monitor.last_activity
            return settled

        def edit_plan(tool_pick=None):
            """What one device's edit does, drawn from the seed before any edit runs."""
            tool = tool_pick or ("keepassxc-cli" if rng.random() < 0.35 else "mypass-sync")
            action = "add" if rng.random() < 0.2 else "edit"
            field = rng.choice(["UserName", "URL", "Notes", "Password"]) if action == "edit" else "UserName"
            return {"tool": tool, "action": action, "field": field, "pick": rng.random()}

        settle_quiet = arguments.delay + 4
        final_quiet = arguments.delay + 5
        if arguments.pattern == "random":
            # Random rounds: one device, or several at once; waits shorter and longer than the delay.
            for round_number in range(arguments.rounds):
                choice = rng.random()
                if len(devices) == 2:
                    chosen = devices if choice < 0.4 else [devices[0] if choice < 0.7 else devices[1]]
                else:
                    count = 1 if choice < 0.4 else 2 if choice < 0.7 else 3
                    chosen = sorted(rng.sample(devices, count), key=devices.index)
                plans = [(device, edit_plan()) for device in chosen]
                pause = rng.uniform(0.2, 2.5) * max(1, arguments.delay)
                run_round(round_number, plans, settled_before=round_number == 0)
                time.sleep(pause)
            # Settle, then one last simultaneous edit on every device: a real conflict whose aftermath is measured.
            settle_started = time.time()
            settled = settle(settle_quiet, settle_timeout, "the folder to settle before the last round",
                             report["roundLog"][-1] if report["roundLog"] else None)
            report["settleBeforeLastRound"] = round(time.time() - settle_started, 1)
            last = run_round(arguments.rounds, [(device, edit_plan()) for device in devices], settled_before=settled)
        else:
            first = devices[:min(len(devices), arguments.first_round_devices or len(devices))]
            entry = "Ünïcode Bank"  # the fixture's entry in the root group
            offset = rng.randrange(2)
            tools = ["mypass-sync", "keepassxc-cli"]
            plans = [(device, {"tool": tools[(index + offset) % 2], "action": "edit", "field": "Password", "path": entry})
                     for index, device in enumerate(first)]
            record = run_round(1, plans, settled_before=True)
            settled = settle(settle_quiet, settle_timeout, "the folder to settle after round 1", record)
            record = run_round(2, [(devices[0], {"tool": rng.choice(tools), "action": "edit",
                                                 "field": rng.choice(["UserName", "URL", "Notes", "Password"]),
                                                 "path": "Internet/GitHub"})], settled_before=settled)
            settled = settle(settle_quiet, settle_timeout, "the folder to settle after round 2", record)
            last = run_round(3, [(devices[1], {"tool": rng.choice(tools), "action": "add", "field": "UserName"})],
                             settled_before=settled)
        last_edit = last["editsDone"]
        report["quiet"] = settle(final_quiet, arguments.quiet_timeout, "the folder to be quiet after the last edit", last)
        last_activity = last["lastActivity"]
        report["secondsFromLastEditToQuiet"] = round(max(0.0, last_activity - last_edit), 2)
        last_copy = monitor.last_copy_between(last["start"]) or last_edit
        report["secondsFromLastCopyToQuiet"] = round(max(0.0, last_activity - max(last_copy, last_edit)), 2)
        report["copiesAfterLastEdit"] = monitor.copies_between(last["start"])
        monitor.running = False
        monitor.join(5)
        report["copies"] = sorted(monitor.copies)

        # Per copy: what each device's watcher did with it; per device: events by kind; the writes
        # that changed nothing and every restore, with the log lines as evidence.
        handled = {}
        report["eventCounts"] = {device.name: {} for device in devices}
        report["watcherOtherLines"] = {}
        for device in devices:
            for event, line in device.watch_lines():
                if event is None:
                    if line.strip():
                        report["watcherOtherLines"].setdefault(device.name, []).append(line[-300:])
                    continue
                kind = event.get("kind", "?")
                counts = report["eventCounts"][device.name]
                counts[kind] = counts.get(kind, 0) + 1
                changes = event.get("changes")
                if kind in ("conflictCopyMerged", "conflictCopyRetired"):
                    name = os.path.basename(str(event.get("detail", "")).split(" -> ")[0])
                    handled.setdefault(name, []).append(f"{device.name}:{kind}:{len(changes or [])}")
                if kind in WRITING_KINDS and not changes:
                    report["emptyWrites"].append({"device": device.name, "kind": kind, "time": event.get("time"), "line": line[-600:]})
                if kind == "restored":
                    report["restores"].append({"device": device.name, "time": event.get("time"), "changes": len(changes or []),
                                               "line": line[-600:]})
                if kind in PROBLEM_KINDS:
                    report["errors"].append(f"{device.name}: {kind}: {event.get('detail')}")
                if kind == "conflictCopyLeft":
                    # A failure to read the copy, also when it vanished meanwhile (merged and removed
                    # elsewhere, the deletion synced): a copy really left shows in leftInFolders.
                    report["copiesReportedLeft"].append({"device": device.name, "time": event.get("time"), "line": line[-600:]})
        # An empty write folded in the same second as a merge that changed something may have been
        # one commit with it (several copies folded at once): noted, still listed.
        for empty in report["emptyWrites"]:
            empty["sameSecondAsAChangingMerge"] = any(
                event.get("time") == empty["time"] and event.get("kind") in WRITING_KINDS and event.get("changes")
                for device in devices if device.name == empty["device"] for event in device.events())
        report["copiesHandled"] = handled
        # A copy carried something new if some watcher merged it with a change; one no watcher
        # reported on was removed by something else (Syncthing, a deletion synced from elsewhere).
        nothing_new = sorted(name for name, kinds in handled.items() if not any(":conflictCopyMerged:" in kind and not kind.endswith(":0")
                                                                                  for kind in kinds))
        report["copiesWithNothingNew"] = nothing_new
        report["copiesNotHandled"] = sorted(name for name in monitor.copies if name not in handled)

        # Per round: the real conflicts (k devices editing at once: k - 1 versions lose) and the copies
        # that first appeared between its start and the next round's start.
        log = report["roundLog"]
        per_round = []
        for index, record in enumerate(log):
            end = log[index + 1]["start"] if index + 1 < len(log) else None
            edited = [edit for edit in report["edits"] if edit["round"] == record["round"] and edit["status"] == 0]
            real = max(0, len({edit["device"] for edit in edited}) - 1)
            copies = monitor.copies_between(record["start"], end)
            isolated = bool(record["settledBefore"]) and bool(record.get("quietAfter", index + 1 < len(log) and log[index + 1]["settledBefore"]))
            timing = {}
            if "lastActivity" in record:  # the folder was waited for after this round
                last_copy = monitor.last_copy_between(record["start"], end)
                timing = {"secondsFromLastEditToQuiet": round(max(0.0, record["lastActivity"] - record["editsDone"]), 2),
                          "secondsFromLastCopyToQuiet": round(max(0.0, record["lastActivity"] - max(last_copy or 0, record["editsDone"])), 2)}
                record["lastActivity"] = since_start(record["lastActivity"])
            per_round.append({"round": record["round"], "devices": record["devices"], "realConflicts": real, "copies": copies,
                              "quietAfter": record.get("quietAfter"), **timing,
                              "copiesWithNothingNew": [name for name in copies if name in nothing_new],
                              "copiesNotHandled": [name for name in copies if name not in handled],
                              "isolated": isolated})
            record["start"], record["editsDone"] = since_start(record["start"]), since_start(record["editsDone"])
        real_total = sum(entry["realConflicts"] for entry in per_round)
        report["copiesPerConflict"] = {
            "realConflicts": real_total, "copies": len(monitor.copies), "copiesWithNothingNew": len(nothing_new),
            "ratio": round(len(monitor.copies) / real_total, 2) if real_total else None, "rounds": per_round}
        # Same-named copies that differ between devices (two devices made a copy of the same name).
        report["copiesSeen"] = monitor.seen_on
        report["copiesDifferingByDevice"] = sorted(name for name, seen in monitor.seen_on.items()
                                                   if len({entry["sha256"] for entry in seen.values()}) > 1)
        # Copies of one name that appeared on several devices within 0.1 s (each made its own: a copy
        # synced from elsewhere takes longer), with what each held.
        report["sameNamedCopies"] = {
            name: seen for name, seen in monitor.seen_on.items()
            if sum(1 for entry in seen.values() if entry["at"] - min(other["at"] for other in seen.values()) < 0.1) > 1}
        report["shortDeviceIDs"] = {device.name: device.short_id for device in devices}

        report["leftInFolders"] = {device.name: sorted(name for name in device.names()
                                                       if name not in ("vault.kdbx", ".stfolder")
                                                       and not (TEMPORARY.match(name) and stale(device.folder, name)))
                                   for device in devices}
        report["staleTemporaries"] = sorted(f"{device.name}/{name}" for device in devices for name in device.names()
                                            if TEMPORARY.match(name) and stale(device.folder, name))
        report["vaultWrites"] = {device.name: report["eventCounts"][device.name].get("ownWriteIgnored", 0) for device in devices}
        report["finalVaultSha256"] = {device.name: sha256_of(device.vault) for device in devices}
        report["folders"] = [device.folder for device in devices]
        report["states"] = [device.state for device in devices]
        text = ""
        for device in devices:
            with open(device.syncthing_log, errors="replace") as syncthing_log:
                text += syncthing_log.read()
        report["syncthingNotRescanned"] = text.count("modified but not rescanned")

        # Values lost, as keepassxc-cli reads the first device's final vault (the Swift test checks
        # again with the project's reader): each value set, current or in its entry's history. One
        # missing from an entry whose history is full (HistoryMaxItems) and holds only versions as
        # new as the edit or newer was dropped by that limit, not by a merge: listed apart.
        entries, history_limit = entries_in(devices[0].vault, password)
        if entries is None:
            report["errors"].append("keepassxc-cli could not export the final vault")
        else:
            lost, trimmed = [], []
            for edit in report["edits"]:
                if edit["status"] != 0:
                    continue
                matching = [(current, history) for current, history in entries if current.get("Title") == edit["title"]]
                versions = [current for current, _ in matching] + [old for _, history in matching for old, _ in history]
                if any(version.get(edit["field"]) == edit["value"] for version in versions):
                    continue
                text = f"{edit['title']} {edit['field']} {edit['value']} ({edit['device']}, {edit['tool']}, round {edit['round']})"
                full = [history for _, history in matching if history_limit is not None and 0 <= history_limit <= len(history)]
                if full and all(moment is not None and moment >= int(edit["unixTime"]) - 1 for history in full for _, moment in history):
                    trimmed.append(text)
                else:
                    lost.append(text)
            report["valuesLostByKeePassXC"] = lost
            report["valuesDroppedByHistoryLimit"] = trimmed
            report["historyMaxItems"] = history_limit
    except (Exception, KeyboardInterrupt) as error:  # reported, so the test shows what went wrong
        report["errors"].append(f"{type(error).__name__}: {error}")
        if monitor is not None:
            monitor.running = False
            report["copies"] = sorted(monitor.copies)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        kill_running_tools()
        for device in devices:
            device.stop()
    report["seconds"] = round(time.time() - STARTED, 1)
    for record in report["roundLog"]:  # a round interrupted before the summary still has raw times
        for key in ("start", "editsDone", "lastActivity"):
            if record.get(key, 0) > 1e9:
                record[key] = since_start(record[key])
    print(json.dumps(report))


if __name__ == "__main__":
    main()
