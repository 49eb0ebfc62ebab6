/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The buffered writer of whole records (ob_writer.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ob_error.h"
#include "ob_writer.h"

/* Pseudo file systems: writing there is never output (as root it can be a
 * kernel setting), so a path there is refused. */
#define OB_PROC_SUPER_MAGIC 0x9fa0
#define OB_SYSFS_MAGIC 0x62656572

static int ob_writer_refuse(int fd, const char *path, const char *variable, const char *why)
{
    if (fd >= 0) {
        close(fd);
    }
    return ob_fail(OMNIBATCH_ERR_IO, "%s='%s': cannot write there: %s", variable, path, why);
}

void ob_writer_forget(const char *path, int *created)
{
    if (*created) {
        unlink(path);
        *created = 0;
    }
}

int ob_writer_open_fd(const char *path, const char *variable, int *created)
{
    struct statfs fs;
    struct stat st;
    int fd;

    /* O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead
     * of hanging the run in open(2).  No O_TRUNC: a run that then stops
     * (another rank's bad setting) leaves an existing file as it was. */
    *created = 1;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0 && EEXIST == errno) {
        *created = 0;
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    }
    if (fd < 0) {
        *created = 0;
        ob_writer_refuse(-1, path, variable, strerror(errno));
        return -1;
    }
    if (0 != fstat(fd, &st)) {
        ob_writer_refuse(fd, path, variable, strerror(errno));
        ob_writer_forget(path, created);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        ob_writer_refuse(fd, path, variable, "a directory");
        ob_writer_forget(path, created);
        return -1;
    }
    if (0 == fstatfs(fd, &fs) && (OB_PROC_SUPER_MAGIC == fs.f_type || OB_SYSFS_MAGIC == fs.f_type)) {
        ob_writer_refuse(fd, path, variable, "a file under /proc or /sys");
        ob_writer_forget(path, created);
        return -1;
    }
    if (0 != fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
        ob_writer_refuse(fd, path, variable, strerror(errno));
        ob_writer_forget(path, created);
        return -1;
    }
    return fd;
}

int ob_writer_truncate_fd(int fd, const char *path)
{
    struct stat st;

    if (0 == fstat(fd, &st) && S_ISREG(st.st_mode) && 0 != ftruncate(fd, 0)) {
        return ob_fail(OMNIBATCH_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    return OMNIBATCH_SUCCESS;
}

int ob_writer_start(ob_writer *w)
{
    return w->fd < 0 ? OMNIBATCH_SUCCESS : ob_writer_truncate_fd(w->fd, w->path);
}

void ob_writer_abandon(ob_writer *w)
{
    if (w->fd >= 0) {
        close(w->fd);
        ob_writer_forget(w->path, &w->created);
    }
    free(w->buf);
    ob_writer_init(w);
}

void ob_writer_init(ob_writer *w)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
}

int ob_writer_open(ob_writer *w, const char *path, const char *variable, size_t cap, double now)
{
    ob_writer_init(w);
    if (strlen(path) >= sizeof w->path) {
        return ob_fail(OMNIBATCH_ERR_IO, "%s: path too long", variable);
    }
    w->cap = 0 == cap ? OB_WRITER_BUFFER_BYTES : cap;
    w->buf = malloc(w->cap);
    if (NULL == w->buf) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "%s: no memory for a %zu-byte buffer", variable, w->cap);
    }
    w->fd = ob_writer_open_fd(path, variable, &w->created);
    if (w->fd < 0) {
        free(w->buf);
        w->buf = NULL;
        return OMNIBATCH_ERR_IO;
    }
    memcpy(w->path, path, strlen(path) + 1);
    w->last_flush = now;
    return OMNIBATCH_SUCCESS;
}

int ob_writer_fd_is(int fd, const struct stat *st)
{
    struct stat sf;

    return fd >= 0 && 0 == fstat(fd, &sf) && sf.st_dev == st->st_dev && sf.st_ino == st->st_ino;
}

int ob_writer_same_file(const ob_writer *a, const ob_writer *b)
{
    struct stat sb;

    return b->fd >= 0 && 0 == fstat(b->fd, &sb) && ob_writer_fd_is(a->fd, &sb);
}

/* write(2) the whole of buf[0..n): the buffer holds whole records only, so
 * what reaches the file ends at a record's end unless the process dies
 * inside the call. */
static int ob_writer_write_all(ob_writer *w, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t k = write(w->fd, buf, n);

        if (k < 0 && EINTR == errno) {
            continue;
        }
        if (k <= 0) {
            int err = k < 0 ? errno : ENOSPC;

            w->failed = 1;
            return ob_fail(OMNIBATCH_ERR_IO, "cannot write %s: %s", w->path, strerror(err));
        }
        buf += k;
        n -= (size_t) k;
    }
    return OMNIBATCH_SUCCESS;
}

int ob_writer_flush(ob_writer *w, double now)
{
    int rc = OMNIBATCH_SUCCESS;

    w->last_flush = now;
    if (w->fd < 0 || w->failed || 0 == w->len) {
        return OMNIBATCH_SUCCESS;
    }
    rc = ob_writer_write_all(w, w->buf, w->len);
    if (OMNIBATCH_SUCCESS != rc) {
        w->lost += w->records;
    }
    w->len = 0;
    w->records = 0;
    return rc;
}

int ob_writer_flush_due(ob_writer *w, double now)
{
    if (now - w->last_flush < OB_WRITER_FLUSH_SECONDS) {
        return OMNIBATCH_SUCCESS;
    }
    return ob_writer_flush(w, now);
}

int ob_writer_append(ob_writer *w, const char *record, size_t n)
{
    if (w->fd < 0 || w->failed) {
        w->lost++;
        return OMNIBATCH_SUCCESS;
    }
    if (w->len + n > w->cap) {
        int rc = ob_writer_flush(w, w->last_flush);

        if (OMNIBATCH_SUCCESS != rc) {
            w->lost++;
            return rc;
        }
    }
    if (n > w->cap) {
        int rc = ob_writer_write_all(w, record, n);

        w->lost += OMNIBATCH_SUCCESS != rc;
        return rc;
    }
    memcpy(w->buf + w->len, record, n);
    w->len += n;
    w->records++;
    return OMNIBATCH_SUCCESS;
}

int ob_writer_close(ob_writer *w, double now)
{
    int was_failed = w->failed;
    int rc = OMNIBATCH_SUCCESS;

    if (w->fd >= 0) {
        rc = ob_writer_flush(w, now);
        if (0 != close(w->fd) && OMNIBATCH_SUCCESS == rc && !was_failed) {
            rc = ob_fail(OMNIBATCH_ERR_IO, "cannot write %s: %s", w->path, strerror(errno));
        }
    }
    free(w->buf);
    w->buf = NULL;
    w->fd = -1;
    w->len = 0;
    return rc;
}
