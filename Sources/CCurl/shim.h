/* libcurl: HTTP/WebDAV and SFTP transfers. curl_easy_setopt and curl_easy_getinfo are variadic,
   which Swift cannot call; these typed wrappers are the only additions. */
#include <curl/curl.h>

typedef size_t (*mypass_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode mypass_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mypass_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mypass_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mypass_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mypass_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mypass_curl_set_callback(CURL *handle, CURLoption option, mypass_curl_data_callback value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode mypass_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/* CURLAUTH_* are casts in macros, which Swift does not import. */
static inline long mypass_curl_auth_basic_or_digest(void) { return (long)(CURLAUTH_BASIC | CURLAUTH_DIGEST); }

/* SFTP: the upload's data source and the host-key check. */
static inline CURLcode mypass_curl_set_read_callback(CURL *handle, curl_read_callback value) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, value);
}
static inline CURLcode mypass_curl_set_host_key_callback(CURL *handle, curl_sshkeycallback value) {
    return curl_easy_setopt(handle, CURLOPT_SSH_KEYFUNCTION, value);
}
static inline long mypass_curl_ssh_auth_keys_or_agent(void) { return (long)(CURLSSH_AUTH_PUBLICKEY | CURLSSH_AUTH_AGENT); }

/* Progress: lets a transfer be cancelled from another thread (a non-zero return aborts it). */
static inline CURLcode mypass_curl_set_progress_callback(CURL *handle, curl_xferinfo_callback value, void *context) {
    curl_easy_setopt(handle, CURLOPT_XFERINFODATA, context);
    curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
