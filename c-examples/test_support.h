/*
 * Shared by the C vector tests: pass/fail counters and a small JSON-lines reader
 * (strings decoded to UTF-8 with every escape, surrogate pairs included).
 * Include it first, once, from a test program.
 */
#ifndef MEMBRANE_TEST_SUPPORT_H
#define MEMBRANE_TEST_SUPPORT_H
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "membrane_frame.h"

static int passes, failures;
static int case_failed;

static void fail(const char *name, const char *format, ...) {
    va_list args;
    printf("FAIL %s: ", name);
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
    printf("\n");
    failures++;
    case_failed = 1;
}

/* Count a case as passed when no check in it failed. */
static void begin_case(void) { case_failed = 0; }
static void end_case(void) {
    if (!case_failed) passes++;
}

/* ---- a small JSON reader over one NUL-terminated line ---- */

static const char *ws(const char *p) {
    while (p != NULL && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    return p;
}

/* The character after the JSON value at p, or NULL when there is none. The vector
 * files are trusted: nesting is shallow, so recursion is fine here. */
static const char *skip_value(const char *p) {
    p = ws(p);
    if (p == NULL || *p == '\0') return NULL;
    if (*p == '"') {
        for (p++; *p != '"'; p++) {
            if (*p == '\0') return NULL;
            if (*p == '\\' && *++p == '\0') return NULL;
        }
        return p + 1;
    }
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (*p != '"') return NULL;
                p = ws(skip_value(p));
                if (p == NULL || *p++ != ':') return NULL;
            }
            p = ws(skip_value(p));
            if (p == NULL) return NULL;
            if (*p == ',') {
                p = ws(p + 1);
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    const char *start = p;
    while (*p != '\0' && strchr("+-0123456789.eEtruefalsn", *p) != NULL) p++;
    return p == start ? NULL : p;
}

/* The value of `key` in the object at p, or NULL. (The keys of the vector files have
 * no escapes, so they compare as raw text.) */
static const char *member(const char *p, const char *key) {
    p = ws(p);
    if (p == NULL || *p != '{') return NULL;
    p = ws(p + 1);
    while (p != NULL && *p == '"') {
        const char *name = p + 1;
        const char *after = skip_value(p);
        if (after == NULL) return NULL;
        size_t name_len = (size_t)(after - 1 - name);
        p = ws(after);
        if (*p != ':') return NULL;
        const char *value = ws(p + 1);
        if (name_len == strlen(key) && memcmp(name, key, name_len) == 0) return value;
        p = ws(skip_value(value));
        if (p != NULL && *p == ',') p = ws(p + 1);
    }
    return NULL;
}

static int hex4(const char *p, unsigned long *out) {
    unsigned long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return 0;
        v = v * 16 + (unsigned long)d;
    }
    *out = v;
    return 1;
}

static size_t put_utf8(unsigned long cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decode the JSON string at p into a new buffer (UTF-8, NUL-terminated; it may hold
 * NULs itself, so use *len). NULL when p is not a valid JSON string. Free it. */
static char *string_value(const char *p, size_t *len) {
    if (p == NULL || *p != '"') return NULL;
    char *out = malloc(strlen(p) + 1); /* a decoded string is never longer than its JSON */
    size_t n = 0;
    if (out == NULL) return NULL;
    for (p++; *p != '"'; p++) {
        if (*p == '\0') goto bad;
        if (*p != '\\') {
            out[n++] = *p;
            continue;
        }
        switch (*++p) {
        case '"': case '\\': case '/': out[n++] = *p; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned long cp, low;
            if (!hex4(p + 1, &cp)) goto bad;
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (p[1] != '\\' || p[2] != 'u' || !hex4(p + 3, &low) || low < 0xDC00 || low > 0xDFFF) goto bad;
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                goto bad;
            }
            n += put_utf8(cp, out + n);
            break;
        }
        default: goto bad;
        }
    }
    out[n] = '\0';
    *len = n;
    return out;
bad:
    free(out);
    return NULL;
}

/* A decoded string member, or NULL. */
static char *string_member(const char *obj, const char *key, size_t *len) {
    return string_value(member(obj, key), len);

#endif /* MEMBRANE_TEST_SUPPORT_H */
