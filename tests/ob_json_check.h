/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A JSON validator for the tests: recursive descent over RFC 8259's
 * grammar, enough to say whether the report parses.  json_parses() is the
 * entry point; everything is static, one copy per test program.
 */
#ifndef OB_JSON_CHECK_H
#define OB_JSON_CHECK_H

#include <ctype.h>
#include <string.h>

typedef struct jp {
    const char *s;
    int ok;
} jp;

static void jp_ws(jp *p)
{
    while (' ' == *p->s || '\n' == *p->s || '\t' == *p->s || '\r' == *p->s) {
        p->s++;
    }
}

static void jp_value(jp *p);

static void jp_expect(jp *p, const char *word)
{
    size_t n = strlen(word);

    if (0 != strncmp(p->s, word, n)) {
        p->ok = 0;
        return;
    }
    p->s += n;
}

static void jp_string(jp *p)
{
    if ('"' != *p->s) {
        p->ok = 0;
        return;
    }
    for (p->s++; p->ok && '"' != *p->s; p->s++) {
        if ('\0' == *p->s || (unsigned char) *p->s < 0x20) {
            p->ok = 0;
        } else if ('\\' == *p->s) {
            p->s++;
            if ('u' == *p->s) {
                for (int k = 1; k <= 4; k++) {
                    if (!isxdigit((unsigned char) p->s[k])) {
                        p->ok = 0;
                    }
                }
                p->s += 4;
            } else if (NULL == strchr("\"\\/bfnrt", *p->s) || '\0' == *p->s) {
                p->ok = 0;
            }
        }
    }
    if (p->ok) {
        p->s++;
    }
}

static void jp_number(jp *p)
{
    const char *start = p->s;

    if ('-' == *p->s) {
        p->s++;
    }
    if ('0' == *p->s) {
        p->s++;
    } else if (isdigit((unsigned char) *p->s)) {
        while (isdigit((unsigned char) *p->s)) {
            p->s++;
        }
    } else {
        p->ok = 0;
        return;
    }
    if ('.' == *p->s) {
        p->s++;
        if (!isdigit((unsigned char) *p->s)) {
            p->ok = 0;
        }
        while (isdigit((unsigned char) *p->s)) {
            p->s++;
        }
    }
    if ('e' == *p->s || 'E' == *p->s) {
        p->s++;
        if ('+' == *p->s || '-' == *p->s) {
            p->s++;
        }
        if (!isdigit((unsigned char) *p->s)) {
            p->ok = 0;
        }
        while (isdigit((unsigned char) *p->s)) {
            p->s++;
        }
    }
    if (p->s == start) {
        p->ok = 0;
    }
}

static void jp_members(jp *p, char close, int keyed)
{
    p->s++;
    jp_ws(p);
    if (close == *p->s) {
        p->s++;
        return;
    }
    while (p->ok) {
        jp_ws(p);
        if (keyed) {
            jp_string(p);
            jp_ws(p);
            jp_expect(p, ":");
        }
        jp_value(p);
        jp_ws(p);
        if (',' == *p->s) {
            p->s++;
        } else if (close == *p->s) {
            p->s++;
            return;
        } else {
            p->ok = 0;
        }
    }
}

static void jp_value(jp *p)
{
    jp_ws(p);
    if (!p->ok) {
        return;
    }
    switch (*p->s) {
    case '{':
        jp_members(p, '}', 1);
        break;
    case '[':
        jp_members(p, ']', 0);
        break;
    case '"':
        jp_string(p);
        break;
    case 't':
        jp_expect(p, "true");
        break;
    case 'f':
        jp_expect(p, "false");
        break;
    case 'n':
        jp_expect(p, "null");
        break;
    default:
        jp_number(p);
        break;
    }
}

static int json_parses(const char *text)
{
    jp p = { text, 1 };

    jp_value(&p);
    jp_ws(&p);
    return p.ok && '\0' == *p.s;
}

#endif /* OB_JSON_CHECK_H */
