/*
 * record_file.c - reading XCHG_RECORD files and scaling them (see
 * record_file.h; the writer is src/core/record.c).
 */
#include "record_file.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_record_spec(const char *spec, char *path, size_t pathlen, int *index)
{
    *index = 1;
    size_t n = strlen(spec);
    const char *colon = strrchr(spec, ':');
    if (colon && colon[1]) {
        const char *d = colon + 1;
        while (*d && isdigit((unsigned char)*d))
            d++;
        if (!*d) { /* ":123": a shape number */
            long v = strtol(colon + 1, NULL, 10);
            if (v < 1 || v > 1000000000)
                return -1;
            *index = (int)v;
            n = (size_t)(colon - spec);
        }
    }
    if (n == 0 || n >= pathlen)
        return -1;
    memcpy(path, spec, n);
    path[n] = 0;
    return 0;
}

/* A token reader over the file that counts lines and skips comments. */
typedef struct reader {
    FILE *f;
    long line;
    int at_line_start;
} reader;

/* The next whitespace-separated token into tok; 0 at end of file. */
static int next_token(reader *r, char *tok, size_t n)
{
    int c;
    tok[0] = 0;
    for (;;) {
        c = getc(r->f);
        if (c == EOF)
            return 0;
        if (c == '\n') {
            r->line++;
            r->at_line_start = 1;
            continue;
        }
        if (c == '#' && r->at_line_start) {
            while ((c = getc(r->f)) != EOF && c != '\n')
                ;
            if (c == '\n') {
                r->line++;
                r->at_line_start = 1;
            }
            continue;
        }
        if (isspace(c))
            continue;
        break;
    }
    r->at_line_start = 0;
    size_t k = 0;
    while (c != EOF && !isspace(c)) {
        if (k + 1 < n)
            tok[k++] = (char)c;
        c = getc(r->f);
    }
    tok[k] = 0;
    if (c == '\n') {
        ungetc(c, r->f);
    }
    return 1;
}

static int parse_i64(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < 0)
        return -1;
    *v = x;
    return 0;
}

int bench_record_read(const char *path, int index, bench_record *rec, char *err,
                      size_t errlen)
{
    memset(rec, 0, sizeof *rec);
    snprintf(rec->path, sizeof rec->path, "%s", path);
    rec->index = index;
    reader r = {fopen(path, "r"), 1, 1};
    if (!r.f) {
        snprintf(err, errlen, "cannot open '%s'", path);
        return -1;
    }
    char tok[64];
    int rc = -1;
    if (!next_token(&r, tok, sizeof tok) || strcmp(tok, "xchg-record") ||
        !next_token(&r, tok, sizeof tok) || strcmp(tok, "1")) {
        snprintf(err, errlen, "%s: not an XCHG_RECORD file (it starts with \"xchg-record "
                 "1\")", path);
        goto out;
    }
    for (;;) {
        if (!next_token(&r, tok, sizeof tok)) {
            if (rec->nshapes < index) {
                snprintf(err, errlen, "%s: has %d shape%s, not a shape %d", path,
                         rec->nshapes, rec->nshapes == 1 ? "" : "s", index);
                goto out;
            }
            rc = 0;
            goto out;
        }
        long line = r.line;
        int64_t P = 0, calls = 0;
        char a[64], b[64];
        if (strcmp(tok, "shape") || !next_token(&r, a, sizeof a) ||
            !next_token(&r, b, sizeof b) || parse_i64(a, &P) || parse_i64(b, &calls) ||
            P < 1 || P > (1 << 20)) {
            snprintf(err, errlen, "%s:%ld: expected \"shape P calls\" (P in 1..2^20)", path,
                     line);
            goto out;
        }
        rec->nshapes++;
        int mine = rec->nshapes == index;
        if (mine) {
            rec->P0 = (int)P;
            rec->calls = (unsigned long)calls;
            rec->bytes = malloc(sizeof(int64_t) * (size_t)P * (size_t)P);
            if (!rec->bytes) {
                snprintf(err, errlen, "%s: no memory for a %" PRId64 " x %" PRId64 " matrix",
                         path, P, P);
                goto out;
            }
        }
        for (int64_t k = 0; k < P * P; k++) {
            int64_t v;
            if (!next_token(&r, tok, sizeof tok) || parse_i64(tok, &v)) {
                snprintf(err, errlen, "%s:%ld: shape %d: expected %" PRId64 " x %" PRId64
                         " byte counts (non-negative integers), found %s%s%s", path, r.line,
                         rec->nshapes, P, P, tok[0] ? "\"" : "the end", tok,
                         tok[0] ? "\"" : "");
                goto out;
            }
            if (mine)
                rec->bytes[k] = v;
        }
    }
out:
    fclose(r.f);
    if (rc != 0)
        bench_record_free(rec);
    return rc;
}

void bench_record_free(bench_record *rec)
{
    free(rec->bytes);
    rec->bytes = NULL;
}

int64_t bench_record_bytes(const bench_record *rec, int P, int i, int j)
{
    int64_t P0 = rec->P0;
    int64_t a = (int64_t)i * P0 / P, b = (int64_t)j * P0 / P;
    return rec->bytes[a * P0 + b];
}
