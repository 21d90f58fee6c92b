/* libcurl: HTTP/WebDAV and SFTP transfers.
   Opened when a transfer first needs it (dlopen), not linked: with the TLS, Kerberos, LDAP and SSH
   libraries it pulls in it was about 5 MB of the memory of every command, the many that never
   reach a server included. Each function is looked up by name in the library opened once; where
   libcurl cannot be opened, the functions fail as libcurl's own do when it cannot start (NULL
   handle, CURLE_FAILED_INIT), and the callers say so.
   curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call; the typed
   wrappers below call them. */
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdatomic.h>

/* The library's file name: libcurl4's soname on Debian. */
#define MYPASS_CURL_LIBRARY "libcurl.so.4"

static inline void *mypass_curl_library(void) {
    static _Atomic(void *) library;
    void *handle = atomic_load_explicit(&library, memory_order_acquire);
    if (handle == NULL) {
        /* dlopen is thread-safe and counts its references: two threads here get the same handle. */
        handle = dlopen(MYPASS_CURL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) atomic_store_explicit(&library, handle, memory_order_release);
    }
    return handle;
}

static inline void *mypass_curl_symbol(const char *name) {
    void *library = mypass_curl_library();
    return library != NULL ? dlsym(library, name) : NULL;
}

static inline CURLcode mypass_curl_global_init(long flags) {
    CURLcode (*function)(long) = (CURLcode (*)(long))mypass_curl_symbol("curl_global_init");
    return function != NULL ? function(flags) : CURLE_FAILED_INIT;
}
static inline CURL *mypass_curl_easy_init(void) {
    CURL *(*function)(void) = (CURL *(*)(void))mypass_curl_symbol("curl_easy_init");
    return function != NULL ? function() : NULL;
}
static inline void mypass_curl_easy_cleanup(CURL *handle) {
    void (*function)(CURL *) = (void (*)(CURL *))mypass_curl_symbol("curl_easy_cleanup");
    if (function != NULL) function(handle);
}
static inline void mypass_curl_easy_reset(CURL *handle) {
    void (*function)(CURL *) = (void (*)(CURL *))mypass_curl_symbol("curl_easy_reset");
    if (function != NULL) function(handle);
}
static inline CURLcode mypass_curl_easy_perform(CURL *handle) {
    CURLcode (*function)(CURL *) = (CURLcode (*)(CURL *))mypass_curl_symbol("curl_easy_perform");
    return function != NULL ? function(handle) : CURLE_FAILED_INIT;
}
static inline const char *mypass_curl_easy_strerror(CURLcode code) {
    const char *(*function)(CURLcode) = (const char *(*)(CURLcode))mypass_curl_symbol("curl_easy_strerror");
    return function != NULL ? function(code) : "libcurl could not be opened";
}
static inline struct curl_slist *mypass_curl_slist_append(struct curl_slist *list, const char *text) {
    struct curl_slist *(*function)(struct curl_slist *, const char *) =
        (struct curl_slist *(*)(struct curl_slist *, const char *))mypass_curl_symbol("curl_slist_append");
    return function != NULL ? function(list, text) : NULL;
}
static inline void mypass_curl_slist_free_all(struct curl_slist *list) {
    void (*function)(struct curl_slist *) = (void (*)(struct curl_slist *))mypass_curl_symbol("curl_slist_free_all");
    if (function != NULL) function(list);
}

typedef CURLcode (*mypass_curl_setopt_function)(CURL *, CURLoption, ...);
typedef CURLcode (*mypass_curl_getinfo_function)(CURL *, CURLINFO, ...);

static inline mypass_curl_setopt_function mypass_curl_setopt(void) {
    return (mypass_curl_setopt_function)mypass_curl_symbol("curl_easy_setopt");
}

typedef size_t (*mypass_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode mypass_curl_set_long(CURL *handle, CURLoption option, long value) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    return setopt != NULL ? setopt(handle, option, value) : CURLE_FAILED_INIT;
}
static inline CURLcode mypass_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    return setopt != NULL ? setopt(handle, option, value) : CURLE_FAILED_INIT;
}
static inline CURLcode mypass_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    return setopt != NULL ? setopt(handle, option, value) : CURLE_FAILED_INIT;
}
static inline CURLcode mypass_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    return setopt != NULL ? setopt(handle, option, value) : CURLE_FAILED_INIT;
}
static inline CURLcode mypass_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    return setopt != NULL ? setopt(handle, option, value) : CURLE_FAILED_INIT;
}
static inline CURLcode mypass_curl_set_callback(CURL *handle, CURLoption option, mypass_curl_data_callback value) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    return setopt != NULL ? setopt(handle, option, value) : CURLE_FAILED_INIT;
}
static inline CURLcode mypass_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    mypass_curl_getinfo_function getinfo = (mypass_curl_getinfo_function)mypass_curl_symbol("curl_easy_getinfo");
    return getinfo != NULL ? getinfo(handle, info, value) : CURLE_FAILED_INIT;
}

/* CURLAUTH_* are casts in macros, which Swift does not import. */
static inline long mypass_curl_auth_basic_or_digest(void) { return (long)(CURLAUTH_BASIC | CURLAUTH_DIGEST); }

/* SFTP: the upload's data source and the host-key check. */
static inline CURLcode mypass_curl_set_read_callback(CURL *handle, curl_read_callback value) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    return setopt != NULL ? setopt(handle, CURLOPT_READFUNCTION, value) : CURLE_FAILED_INIT;
}
static inline CURLcode mypass_curl_set_host_key_callback(CURL *handle, curl_sshkeycallback value) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    return setopt != NULL ? setopt(handle, CURLOPT_SSH_KEYFUNCTION, value) : CURLE_FAILED_INIT;
}
static inline long mypass_curl_ssh_auth_keys_or_agent(void) { return (long)(CURLSSH_AUTH_PUBLICKEY | CURLSSH_AUTH_AGENT); }

/* Progress: lets a transfer be cancelled from another thread (a non-zero return aborts it). */
static inline CURLcode mypass_curl_set_progress_callback(CURL *handle, curl_xferinfo_callback value, void *context) {
    mypass_curl_setopt_function setopt = mypass_curl_setopt();
    if (setopt == NULL) return CURLE_FAILED_INIT;
    setopt(handle, CURLOPT_XFERINFODATA, context);
    setopt(handle, CURLOPT_NOPROGRESS, 0L);
    return setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
