/* libnotify: desktop notices through org.freedesktop.Notifications on the session bus. Its action
   callbacks and GLib lists are wrapped here so that Swift passes plain C strings and one callback. */
#include <libnotify/notify.h>
#include <string.h>

/* Whether the notification server offers `capability` ("actions", "body"); 0 without a server. */
static inline int mypass_notify_server_has(const char *capability) {
    GList *caps = notify_get_server_caps();
    int found = 0;
    for (GList *item = caps; item != NULL; item = item->next) {
        if (item->data != NULL && strcmp((const char *)item->data, capability) == 0) found = 1;
    }
    g_list_free_full(caps, g_free);
    return found;
}

/* The callback every action button reaches: the notice's context and the action's name. */
typedef void (*mypass_notify_action_callback)(void *context, const char *action);

typedef struct {
    mypass_notify_action_callback callback;
    void *context;
} mypass_notify_action_target;

static inline void mypass_notify_action_trampoline(NotifyNotification *notification, char *action, gpointer data) {
    mypass_notify_action_target *target = data;
    target->callback(target->context, action);
    notify_notification_close(notification, NULL);
}

/* Adds an action button `action` labelled `label` that calls `callback(context, action)`. */
static inline void mypass_notify_add_action(NotifyNotification *notification, const char *action, const char *label,
                                            mypass_notify_action_callback callback, void *context) {
    mypass_notify_action_target *target = g_new0(mypass_notify_action_target, 1);
    target->callback = callback;
    target->context = context;
    notify_notification_add_action(notification, action, label, mypass_notify_action_trampoline, target, g_free);
}

/* Shows the notice; NULL on success, else the error's message (free with g_free). */
static inline char *mypass_notify_show(NotifyNotification *notification) {
    GError *error = NULL;
    if (notify_notification_show(notification, &error)) return NULL;
    char *message = g_strdup(error != NULL ? error->message : "unknown error");
    if (error != NULL) g_error_free(error);
    return message;
}

/* Runs GLib's default main loop (action callbacks are delivered there); never returns. */
static inline void mypass_notify_run_main_loop(void) {
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(loop);
}
