/* libsecret: the desktop keyring (Secret Service: GNOME Keyring, KWallet, KeePassXC). Its attribute
   calls are variadic or take GLib hash tables, which Swift cannot build; these wrappers take
   parallel arrays of C strings. Every call is synchronous (the tool has no main loop). */
#include <libsecret/secret.h>
#include <string.h>

/* The schema of a vault's password: what identifies the database, where it was, and the key file's
   path (never its bytes). */
static inline const SecretSchema *mypass_secret_schema(void) {
    static const SecretSchema schema = {
        "org.mypass.Sync.VaultPassword", SECRET_SCHEMA_NONE,
        {
            {"application", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {"database-root", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {"database-created", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {"database-name", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {"path", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {"key-file", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {NULL, 0},
        }
    };
    return &schema;
}

static inline GHashTable *mypass_secret_attributes(const char *const *keys, const char *const *values, int count) {
    GHashTable *table = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 0; i < count; i++) g_hash_table_insert(table, (gpointer)keys[i], (gpointer)values[i]);
    return table;
}

/* The message of `error` (to be freed with g_free), and the error freed; NULL when none. */
static inline char *mypass_secret_take_message(GError *error) {
    if (error == NULL) return NULL;
    char *message = g_strdup(error->message);
    g_error_free(error);
    return message;
}

/* Stores `password` in the default collection under the attributes; 1 on success. */
static inline int mypass_secret_store(const char *const *keys, const char *const *values, int count, const char *label,
                                      const char *password, char **message) {
    GError *error = NULL;
    GHashTable *table = mypass_secret_attributes(keys, values, count);
    gboolean stored = secret_password_storev_sync(mypass_secret_schema(), table, SECRET_COLLECTION_DEFAULT, label, password,
                                                  NULL, &error);
    g_hash_table_unref(table);
    *message = mypass_secret_take_message(error);
    return stored ? 1 : 0;
}

/* Removes the items with these attributes; 1 when any was removed, 0 when none, -1 on error. */
static inline int mypass_secret_clear(const char *const *keys, const char *const *values, int count, char **message) {
    GError *error = NULL;
    GHashTable *table = mypass_secret_attributes(keys, values, count);
    gboolean removed = secret_password_clearv_sync(mypass_secret_schema(), table, NULL, &error);
    g_hash_table_unref(table);
    *message = mypass_secret_take_message(error);
    if (*message != NULL) return -1;
    return removed ? 1 : 0;
}

/* The items with these attributes (all of them, unlocking their collection through the keyring's
   own prompt where it has one); NULL with `message` set on error, NULL without one when none. */
static inline GList *mypass_secret_search(const char *const *keys, const char *const *values, int count, int load_secrets,
                                          char **message) {
    GError *error = NULL;
    GHashTable *table = mypass_secret_attributes(keys, values, count);
    SecretSearchFlags flags = SECRET_SEARCH_ALL | SECRET_SEARCH_UNLOCK | (load_secrets ? SECRET_SEARCH_LOAD_SECRETS : 0);
    GList *items = secret_password_searchv_sync(mypass_secret_schema(), table, flags, NULL, &error);
    g_hash_table_unref(table);
    *message = mypass_secret_take_message(error);
    return items;
}

static inline int mypass_secret_count(GList *items) { return (int)g_list_length(items); }

static inline SecretRetrievable *mypass_secret_item(GList *items, int index) {
    return SECRET_RETRIEVABLE(g_list_nth_data(items, (guint)index));
}

/* The item's label (free with g_free). */
static inline char *mypass_secret_label(SecretRetrievable *item) { return secret_retrievable_get_label(item); }

/* The item's attribute `key` (free with g_free); NULL when it has none. */
static inline char *mypass_secret_attribute(SecretRetrievable *item, const char *key) {
    GHashTable *attributes = secret_retrievable_get_attributes(item);
    const char *value = attributes ? g_hash_table_lookup(attributes, key) : NULL;
    char *copy = value ? g_strdup(value) : NULL;
    if (attributes) g_hash_table_unref(attributes);
    return copy;
}

/* Copies the item's secret into `buffer` (at most `capacity` bytes); its length, or -1. The copy
   libsecret made is released (its secure memory is wiped). */
static inline long mypass_secret_copy(SecretRetrievable *item, unsigned char *buffer, long capacity, char **message) {
    GError *error = NULL;
    SecretValue *value = secret_retrievable_retrieve_secret_sync(item, NULL, &error);
    *message = mypass_secret_take_message(error);
    if (value == NULL) return -1;
    gsize length = 0;
    const gchar *bytes = secret_value_get(value, &length);
    long copied = (long)length <= capacity ? (long)length : -1;
    if (copied >= 0) memcpy(buffer, bytes, (size_t)copied);
    secret_value_unref(value);
    return copied;
}

static inline void mypass_secret_free_items(GList *items) { g_list_free_full(items, g_object_unref); }
