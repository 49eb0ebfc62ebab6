/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A buffered writer of whole records for the files the library streams
 * while a run goes on (the step trace; any later per-step output).  It
 * exists so that a killed run keeps its output:
 *   - the file is opened when the run starts (ob_writer_open()), so a path
 *     that cannot be written (a missing or read-only directory, a directory,
 *     a file under /proc or /sys) is found before the first step;
 *   - records are appended whole (ob_writer_append()) and reach the file in
 *     write(2) calls that each carry whole records only, so the file never
 *     ends in a broken record, whatever moment the process is killed;
 *   - memory is bounded by the buffer, written out when full, when
 *     ob_writer_flush_due() finds it older than OB_WRITER_FLUSH_SECONDS, and
 *     at ob_writer_close();
 *   - a failed write (a full disk) is an OMNIBATCH_ERR_IO naming the path
 *     and the system's reason, reported once; later records are counted as
 *     lost, never half-written.
 * MPI-free; not thread-safe (the caller serialises).
 */
#ifndef OB_WRITER_H
#define OB_WRITER_H

#include <stddef.h>

/** Longest a record waits in the buffer when records keep coming (seconds). */
#define OB_WRITER_FLUSH_SECONDS 2.0
/** Default buffer: written out when full. */
#define OB_WRITER_BUFFER_BYTES ((size_t) 64 << 10)

typedef struct ob_writer {
    int fd;                      /* -1: closed */
    char path[4096];
    char *buf;
    size_t len;                  /* bytes buffered */
    long long records;           /* records buffered */
    size_t cap;
    double last_flush;           /* the caller's clock, seconds */
    int failed;                  /* a write failed: nothing more is written */
    int created;                 /* ob_writer_open() created the file (ob_writer_abandon removes it) */
    long long lost;              /* records not written because a write failed */
} ob_writer;

/**
 * \brief Open (creating it if need be) \p path for writing and check that it can hold output;
 *        an existing file keeps its content until ob_writer_start().
 * \param[in] variable  the setting that named the path ("OMNIBATCH_TRACE"), for the error line.
 * \param[in] cap       buffer bytes (0: OB_WRITER_BUFFER_BYTES).
 * \param[in] now       the caller's clock (seconds), the start of the first flush interval.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_IO with one line "OMNIBATCH_TRACE='dir/x': cannot write
 *         there: No such file or directory" (the system's reason, or "a directory", "a file
 *         under /proc or /sys"); OMNIBATCH_ERR_NOMEM.
 */
int ob_writer_open(ob_writer *w, const char *path, const char *variable, size_t cap, double now);

/** \brief Do two open writers write the same file (same device and inode)? */
int ob_writer_same_file(const ob_writer *a, const ob_writer *b);

struct stat;

/** \brief Does the descriptor \p fd (-1: none) write the file \p st describes (same device and
 *         inode)? */
int ob_writer_fd_is(int fd, const struct stat *st);

/**
 * \brief Append one whole record of \p n bytes (written out first when it would not fit).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_IO the first time a write fails (detail:
 *         "cannot write PATH: No space left on device"); after a failure every record is
 *         counted in ->lost and OMNIBATCH_SUCCESS returned, so the caller warns once.
 */
int ob_writer_append(ob_writer *w, const char *record, size_t n);

/** \brief Write the buffer out now; same returns as ob_writer_append(). */
int ob_writer_flush(ob_writer *w, double now);

/** \brief Write the buffer out if it is older than OB_WRITER_FLUSH_SECONDS. */
int ob_writer_flush_due(ob_writer *w, double now);

/**
 * \brief Write out what is left and close (also a writer that failed to open: a no-op).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_IO when the last write or close(2) failed and
 *         no failure was returned before.
 */
int ob_writer_close(ob_writer *w, double now);

/** \brief An unopened writer (ob_writer_close() on it does nothing). */
void ob_writer_init(ob_writer *w);

/** \brief The run goes ahead: empty the file (a regular one) for the new output. */
int ob_writer_start(ob_writer *w);

/** \brief The run stops before it began: close, and remove the file if ob_writer_open made it. */
void ob_writer_abandon(ob_writer *w);

/**
 * \brief Open \p path as ob_writer_open() does and hand over the descriptor (for output
 *        written in one piece later, through stdio).
 * \param[out] created  1 when the file was created by this call.
 * \return a descriptor >= 0, or -1 with the OMNIBATCH_ERR_IO line in ob_last_error().
 */
int ob_writer_open_fd(const char *path, const char *variable, int *created);

/** \brief Empty the regular file open on \p fd (as ob_writer_start()). */
int ob_writer_truncate_fd(int fd, const char *path);

/** \brief Remove \p path if *created, and clear it. */
void ob_writer_forget(const char *path, int *created);

#endif /* OB_WRITER_H */
