/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * JSON strings (ob_json.h).
 */
#include "config.h"

#include "ob_json.h"

void ob_json_escaped(FILE *f, const char *s)
{
    for (; '\0' != *s; s++) {
        unsigned char c = (unsigned char) *s;

        if ('"' == c || '\\' == c) {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
}

void ob_json_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    ob_json_escaped(f, s);
    fputc('"', f);
}
