internal import Foundation
public import SyncCommit
internal import CNotify

/// Sends `DesktopNotice`s to the desktop's notification service (`org.freedesktop.Notifications`
/// on the session bus) through libnotify, with the app name `mypass-sync`. Every libnotify call
/// runs on one serial queue. Without a session bus or a notification server a notice is dropped
/// and that is said once through `log` (never an error); it is said again only after one got through.
/// A notice's action buttons call `onDecision`; their callbacks arrive on GLib's main loop, run on a
/// thread of its own from the first notice with actions on.
// @unchecked: every mutable property is touched only on `queue` (a serial queue: confinement the compiler cannot see).
public final class DesktopNotifier: @unchecked Sendable {
    /// The app name the notices carry.
    public static let applicationName = "mypass-sync"

    private let queue = DispatchQueue(label: "mypass-sync notices")
    private let log: @Sendable (String) -> Void
    private let onDecision: @Sendable (String, SyncSession.Decision) -> Void
    private let onApproval: @Sendable (String, ShareApprovalRequest) -> Void
    // Touched only on `queue` (the lock-free confinement this class's `@unchecked Sendable` relies on).
    private var initialised = false
    private var unavailableSaid = false
    private var mainLoopStarted = false
    /// The last notice with actions per vault, kept alive while its buttons may be pressed.
    private var shown: [String: OpaquePointer] = [:]
    /// Every action context handed to libnotify (see `show`).
    private var contexts: [ActionContext] = []

    /// A notifier logging its one "no notification service" line through `log`; `onDecision` gets
    /// (vault, decision) when a notice's button is pressed, `onApproval` (vault, request) when a
    /// shared group's Approve button is.
    public init(log: @escaping @Sendable (String) -> Void, onDecision: @escaping @Sendable (String, SyncSession.Decision) -> Void,
                onApproval: @escaping @Sendable (String, ShareApprovalRequest) -> Void = { _, _ in }) {
        self.log = log
        self.onDecision = onDecision
        self.onApproval = onApproval
    }

    /// Sends `notice` (asynchronously, in order).
    public func send(_ notice: DesktopNotice) {
        queue.async { self.show(notice) }
    }

    /// Waits until every notice handed to `send` so far was sent (or dropped).
    public func drain() {
        queue.sync {}
    }

    private func show(_ notice: DesktopNotice) {
        if !initialised {
            initialised = notify_init(Self.applicationName) != 0
            guard initialised else { return unavailable("libnotify could not be initialised") }
        }
        // A server that reads markup in the body (dunst, GNOME) gets entry paths as text, not as markup.
        let body = mypass_notify_server_has("body-markup") != 0 ? Self.escapingMarkup(notice.body) : notice.body
        guard let notification = notify_notification_new(notice.summary, body, "dialog-password") else { return }
        notify_notification_set_urgency(notification, notice.urgency == .critical ? NOTIFY_URGENCY_CRITICAL : NOTIFY_URGENCY_NORMAL)
        let offersActions = (!notice.actions.isEmpty || notice.approval != nil) && mypass_notify_server_has("actions") != 0
        if offersActions {
            let context = ActionContext(vault: notice.vault, approval: notice.approval, onDecision: onDecision, onApproval: onApproval)
            let pointer = Unmanaged.passUnretained(context).toOpaque()
            for decision in notice.actions {
                mypass_notify_add_action(notification, decision.rawValue, decision.rawValue.capitalized, { context, action in
                    guard let context, let action, let decision = SyncSession.Decision(rawValue: String(cString: action)) else { return }
                    let target = Unmanaged<ActionContext>.fromOpaque(context).takeUnretainedValue()
                    target.onDecision(target.vault, decision)
                }, pointer)
            }
            if notice.approval != nil {
                mypass_notify_add_action(notification, "approve", "Approve", { context, _ in
                    guard let context else { return }
                    let target = Unmanaged<ActionContext>.fromOpaque(context).takeUnretainedValue()
                    if let approval = target.approval { target.onApproval(target.vault, approval) }
                }, pointer)
            }
            // Kept for the life of the process (a few bytes per decision notice): an action of a
            // notice replaced or not shown may still be delivered on GLib's thread, so its context is
            // never freed under it.
            contexts.append(context)
            startMainLoop()
        }
        if let message = mypass_notify_show(notification) {
            let text = String(cString: message)
            g_free(message)
            g_object_unref(UnsafeMutableRawPointer(notification))
            return unavailable(text)
        }
        unavailableSaid = false
        if offersActions {
            if let previous = shown[notice.vault] { g_object_unref(UnsafeMutableRawPointer(previous)) }
            shown[notice.vault] = OpaquePointer(notification)
        } else {
            g_object_unref(UnsafeMutableRawPointer(notification))
        }
    }

    /// `text` with the characters of the notification body markup escaped.
    static func escapingMarkup(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    private func unavailable(_ reason: String) {
        guard !unavailableSaid else { return }
        unavailableSaid = true
        log("desktop notices are not shown: no notification service on the session bus (\(reason))")
    }

    private func startMainLoop() {
        guard !mainLoopStarted else { return }
        mainLoopStarted = true
        let thread = Thread { mypass_notify_run_main_loop() }
        thread.name = "mypass-sync notice actions"
        thread.start()
    }

    /// What an action button's callback needs: the vault, the approval offered, and where its decision goes.
    private final class ActionContext: Sendable {
        let vault: String
        let approval: ShareApprovalRequest?
        let onDecision: @Sendable (String, SyncSession.Decision) -> Void
        let onApproval: @Sendable (String, ShareApprovalRequest) -> Void
        init(vault: String, approval: ShareApprovalRequest?, onDecision: @escaping @Sendable (String, SyncSession.Decision) -> Void,
             onApproval: @escaping @Sendable (String, ShareApprovalRequest) -> Void) {
            self.vault = vault
            self.approval = approval
            self.onDecision = onDecision
            self.onApproval = onApproval
        }
    }
}
