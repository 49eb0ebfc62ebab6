/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The configuration table as roff (ob_config.h), for the omnibatch(7) man
 * page: the same rows as ob_config_markdown() writes into
 * docs/configuration.md, read through ob_config_doc_at().
 */
#include "config.h"

#include <string.h>

#include "ob_config.h"

typedef struct ob_roff_out {
    char *buf;
    size_t size;
    size_t len;                  /* the length the whole text needs */
    int bold;                    /* inside a `code span` */
} ob_roff_out;

static void ob_roff_put(ob_roff_out *o, const char *text, size_t n)
{
    if (o->len < o->size) {
        size_t room = o->size - o->len - 1;
        size_t k = n < room ? n : room;

        memcpy(o->buf + o->len, text, k);
        o->buf[o->len + k] = '\0';
    }
    o->len += n;
}

static void ob_roff_puts(ob_roff_out *o, const char *text)
{
    ob_roff_put(o, text, strlen(text));
}

/* Text in roff: a backslash is \e, a minus sign \-, a `code span` bold; a
 * line never starts with a dot or a quote (they would be requests). */
static void ob_roff_text(ob_roff_out *o, const char *text)
{
    if ('.' == text[0] || '\'' == text[0]) {
        ob_roff_puts(o, "\\&");
    }
    for (const char *c = text; '\0' != *c; c++) {
        if ('\\' == *c) {
            ob_roff_puts(o, "\\e");
        } else if ('-' == *c) {
            ob_roff_puts(o, "\\-");
        } else if ('`' == *c) {
            ob_roff_puts(o, o->bold ? "\\fR" : "\\fB");
            o->bold = !o->bold;
        } else {
            ob_roff_put(o, c, 1);
        }
    }
    if (o->bold) {
        ob_roff_puts(o, "\\fR");
        o->bold = 0;
    }
}

size_t ob_config_roff(char *buf, size_t size)
{
    ob_roff_out o = { buf, NULL == buf ? 0 : size, 0, 0 };

    if (o.size > 0) {
        buf[0] = '\0';
    }
    for (size_t i = 0; NULL != ob_config_doc_at(i); i++) {
        const ob_config_doc *d = ob_config_doc_at(i);

        ob_roff_puts(&o, ".TP\n.B ");
        ob_roff_text(&o, d->name);
        ob_roff_puts(&o, "\n");
        ob_roff_text(&o, d->meaning);
        ob_roff_puts(&o, "\n.br\nAllowed: ");
        ob_roff_text(&o, d->allowed);
        ob_roff_puts(&o, ". Default: ");
        if (NULL != d->default_value) {
            ob_roff_puts(&o, "\\fB");
            ob_roff_text(&o, d->default_value);
            ob_roff_puts(&o, "\\fR");
        } else {
            ob_roff_puts(&o, "unset");
        }
        ob_roff_puts(&o, ".\n");
    }
    return o.len;
}
