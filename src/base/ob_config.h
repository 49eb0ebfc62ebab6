/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Every OMNIBATCH_* setting, parsed strictly from the environment: whole-
 * string numbers, ranges checked, booleans as 1/0, on/off, true/false,
 * yes/no (any case).  A bad value fails with one line naming the variable,
 * the value and what is allowed; an unknown OMNIBATCH_* name is a warning.
 * The defaults below are the documented ones: docs/configuration.md's table
 * is written by ob_config_markdown() from the same table that parses.
 *
 * Spellings accepted (the table says which applies to which variable):
 * - numbers: the whole value, C locale, no spaces, no hex, no inf/nan;
 * - counts: decimal integers ("010" is ten, never octal; "0x10" is refused);
 * - byte counts: a decimal integer with an optional suffix K, M or G (either
 *   case) meaning KiB, MiB, GiB: "64K" is 65536;
 * - booleans: 1/0, on/off, true/false, yes/no, in any case;
 * - choices: one of the listed names, in any case;
 * - paths: non-empty, shorter than PATH_MAX.
 * When a name appears twice in the environment, the first wins, as with
 * getenv().
 */
#ifndef OB_CONFIG_H
#define OB_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <limits.h>

/* Defaults, one place.  docs/configuration.md's table repeats them. */
#define OB_DEFAULT_GAIN 1.0            /* Kp of the proportional step */
#define OB_DEFAULT_DEADBAND 0.02       /* least predicted step-time gain worth a change */
#define OB_DEFAULT_FORGET 0.998        /* estimator forgetting factor */
#define OB_DEFAULT_PERIOD 4            /* steps between plan exchanges */
#define OB_DEFAULT_WARMUP 2            /* first steps not measured (cold caches) */
#define OB_DEFAULT_MIN_BYTES 1024      /* least payload of a gradient allreduce */

/* Upper limits of the counts: far above any real run, low enough that sums
 * and products of them in the planner and the shard arithmetic cannot
 * overflow a long.  Plain digits: the configuration table quotes them. */
#define OB_CONFIG_BATCH_LIMIT 1000000000         /* MIN/MAX/GLOBAL_BATCH, GRANULARITY */
#define OB_CONFIG_STEPS_LIMIT 1000000            /* PERIOD, WARMUP */
#define OB_CONFIG_CALLS_LIMIT 100000             /* CALLS_PER_STEP */
#define OB_CONFIG_BYTES_LIMIT ((size_t) 1 << 30) /* MIN_BYTES: 1G */
#define OB_CONFIG_DEBUG_LIMIT 3                  /* DEBUG */

/* The ranges of the real-valued settings, stated once: the settings table,
 * the API's option checks and the planner read these. */
#define OB_GAIN_LO 0.0                 /* excluded */
#define OB_GAIN_HI 1.0
#define OB_DEADBAND_LO 0.0
#define OB_DEADBAND_HI 0.5
#define OB_FORGET_LO 0.5
#define OB_FORGET_HI 1.0

/** How the report is written at MPI_Finalize (OMNIBATCH_REPORT). */
typedef enum ob_report_format {
    OB_REPORT_OFF = 0,
    OB_REPORT_TEXT = 1,
    OB_REPORT_JSON = 2
} ob_report_format;

/** What the code does with the sum of gradients (OMNIBATCH_CONVENTION). */
typedef enum ob_convention {
    OB_CONVENTION_AUTO = -1,     /* not set: the mode decides (API option, or divide-by-p in preload) */
    OB_CONVENTION_MEAN = 0,      /* the sum is the global mean: scale by b_i / B */
    OB_CONVENTION_DIVIDE_BY_P = 1/* the code divides the sum by P: scale by P * b_i / B */
} ob_convention;

/** First plan before any measurement (OMNIBATCH_PRIOR). */
typedef enum ob_prior {
    OB_PRIOR_EQUAL = 0,          /* equal shares */
    OB_PRIOR_CORES = 1,          /* shares proportional to the cores in each rank's cpuset (hwloc) */
    OB_PRIOR_GPUS = 2            /* proportional to GPUs, falling back to cores where none */
} ob_prior;

/** Who decides the plan (OMNIBATCH_PLANNER). */
typedef enum ob_planner_kind {
    OB_PLANNER_AUTO = 0,         /* distributed from OB_PLANNER_AUTO_RANKS ranks on, central below */
    OB_PLANNER_CENTRAL = 1,      /* every rank gathers every record and solves the whole plan */
    OB_PLANNER_DISTRIBUTED = 2   /* each rank keeps its own record; a few small collectives */
} ob_planner_kind;

/** OMNIBATCH_WAIT: how omnibatch_allreduce_gradient() waits for the reduction. */
typedef enum ob_wait_kind {
    OB_WAIT_AUTO = 0,            /* sleep where the rank's CPU quota is under one core (ob_cpuquota.h) */
    OB_WAIT_POLL = 1,            /* the blocking MPI_Allreduce: the MPI library's own waiting (busy polling) */
    OB_WAIT_SLEEP = 2            /* a nonblocking allreduce, tested with naps between (ob_nap.h) */
} ob_wait_kind;

/** OMNIBATCH_PLANNER=auto: the distributed decision from this many ranks on. */
#define OB_PLANNER_AUTO_RANKS 256

/** OMNIBATCH_POOL: peers pool from this many ranks on (below, a mean gains little over one rank). */
#define OB_POOL_MIN_RANKS 16

typedef struct ob_config {
    int enable;                  /* OMNIBATCH_ENABLE, bool, default on: off = pure passthrough, fixed equal plan */
    double gain;                 /* OMNIBATCH_GAIN, Kp in (0, 1] */
    double deadband;             /* OMNIBATCH_DEADBAND, fraction in [0, 0.5] */
    double forget;               /* OMNIBATCH_FORGET, in [0.5, 1] */
    long period;                 /* OMNIBATCH_PERIOD, steps in [1, 1000000] */
    long warmup;                 /* OMNIBATCH_WARMUP, steps in [0, 1000000] */
    long min_batch;              /* OMNIBATCH_MIN_BATCH, in [0, OB_CONFIG_BATCH_LIMIT], default 1 */
    long max_batch;              /* OMNIBATCH_MAX_BATCH, in [min_batch, limit], or 0 = no limit (default) */
    long granularity;            /* OMNIBATCH_GRANULARITY, in [1, limit], default 1; <= max_batch if set */
    long global_batch;           /* OMNIBATCH_GLOBAL_BATCH, in [min_batch, limit], or 0 = unknown (default) */
    size_t min_bytes;            /* OMNIBATCH_MIN_BYTES, in [1, 1G] */
    long calls_per_step;         /* OMNIBATCH_CALLS_PER_STEP, in [1, 100000], or 0 = detect (default) */
    int weight;                  /* OMNIBATCH_WEIGHT, bool, default off */
    ob_convention convention;    /* OMNIBATCH_CONVENTION: mean | divide-by-p; default auto */
    ob_report_format report;     /* OMNIBATCH_REPORT: off | text | json; default text */
    char report_file[PATH_MAX];  /* OMNIBATCH_REPORT_FILE, "" = stderr */
    char trace_file[PATH_MAX];   /* OMNIBATCH_TRACE, "" = none */
    char timeline_file[PATH_MAX]; /* OMNIBATCH_TIMELINE, "" = none */
    char profile_file[PATH_MAX]; /* OMNIBATCH_PROFILE, "" = none: the measured split, kept across runs */
    ob_prior prior;              /* OMNIBATCH_PRIOR: equal | cores | gpus; default equal */
    ob_planner_kind planner;     /* OMNIBATCH_PLANNER: auto | central | distributed; default auto */
    int verify;                  /* OMNIBATCH_VERIFY, bool, default off: check every rank computed the same plan */
    int react;                   /* OMNIBATCH_REACT, bool, default on: a change of speed triggers an exchange */
    int chunks;                  /* OMNIBATCH_CHUNKS, bool, default off: steps worked in chunks that move */
    long chunk_floor;            /* OMNIBATCH_CHUNK_FLOOR, least samples of a chunk, 0 = auto */
    ob_wait_kind wait;           /* OMNIBATCH_WAIT: auto | poll | sleep; default auto */
    int node_sum;                /* OMNIBATCH_NODE_SUM, bool, default on: asleep on one node, sum in shared memory */
    int cpu_quota;               /* OMNIBATCH_CPU_QUOTA, bool, default on: plan on a quota's CPU budget */
    int pool;                    /* OMNIBATCH_POOL, bool, default on: plan on pooled speeds (ob_pool.h) */
    int debug;                   /* OMNIBATCH_DEBUG, 0..3, default 0 */
    char library[PATH_MAX];      /* OMNIBATCH_LIBRARY, "" = unset: read by the Python package */
} ob_config;

/** \brief Fill \p cfg with the documented defaults. */
void ob_config_defaults(ob_config *cfg);

/**
 * \brief Called once per unknown OMNIBATCH_* name met in the environment.
 * \param[in] name the variable's name, e.g. "OMNIBATCH_GIAN".
 * \param[in] suggestion the closest known name, or NULL.
 */
typedef void (*ob_config_warn_fn)(void *ctx, const char *name, const char *suggestion);

/**
 * \brief Parse every OMNIBATCH_* variable of \p envp over the values in \p cfg.
 *
 * \param[in,out] cfg  settings, usually from ob_config_defaults().
 * \param[in] envp     NULL-terminated "NAME=value" array (environ in the library).
 * \param[in] warn     called for unknown OMNIBATCH_* names; NULL = ob_log_warn_rank0 line
 *                     "unknown setting OMNIBATCH_X ignored (did you mean OMNIBATCH_Y?)".
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_CONFIG at the first bad value with the detail
 *         line "OMNIBATCH_GAIN='abc': expected a number in (0, 1]" (ob_last_error()).
 *         \p cfg is unchanged on failure.
 */
int ob_config_from_env(ob_config *cfg, char *const *envp, ob_config_warn_fn warn, void *ctx);

/**
 * \brief The process-wide settings, parsed once from the environment on first use
 *        (thread-safe); the PMPI layer and the API both read them.
 * \param[out] cfg the settings; on failure, the defaults.
 * \return the status of that one parse (the same on every call), with its detail line
 *         repeated in ob_last_error() for the calling thread.
 */
int ob_config_global(const ob_config **cfg);

/** \brief The name of a report format ("off", "text", "json"). */
const char *ob_config_report_name(ob_report_format f);

/** \brief The name of a gradient convention ("auto", "mean", "divide-by-p"). */
const char *ob_config_convention_name(ob_convention c);

/** \brief The name of a first-plan prior ("equal", "cores", "gpus"). */
const char *ob_config_prior_name(ob_prior p);

/** One row of the configuration table (docs/configuration.md), as the parser knows it. */
typedef struct ob_config_doc {
    const char *name;            /* "OMNIBATCH_GAIN" */
    const char *allowed;         /* "a number in (0, 1]": also the end of every error line */
    const char *default_value;   /* a value that parses to the default, or NULL: unset */
    const char *meaning;         /* one sentence */
} ob_config_doc;

/**
 * \brief Row \p i of the configuration table, in the order docs/configuration.md lists them.
 * \return the row, or NULL when \p i is past the last one.
 */
const ob_config_doc *ob_config_doc_at(size_t i);

/**
 * \brief What setting \p name allows, as its error lines say it ("a number
 *        in (0, 1]"), generated from its range; NULL for an unknown name.
 */
const char *ob_config_allowed(const char *name);

/**
 * \brief The configuration table as roff, one .TP entry per variable (name, meaning,
 *        allowed values, default), for the omnibatch(7) man page (src/base/config_roff.c).
 * \param[out] buf   may be NULL (then \p size is ignored); always NUL-terminated if size > 0.
 * \return the length the whole text needs, without the NUL (as snprintf()).
 */
size_t ob_config_roff(char *buf, size_t size);

/**
 * \brief Write the configuration table as Markdown (header and one row per variable).
 *
 * Like snprintf: writes at most \p size bytes including the terminating NUL
 * (nothing when \p size is 0) and returns the length the whole table needs,
 * without the NUL; call with (NULL, 0) to size a buffer.
 */
size_t ob_config_markdown(char *buf, size_t size);

/* ---- settings every rank must share ---- */

/** ob_config_hash() values lie in [0, OB_CONFIG_HASH_TOP): an int64 MAX allreduce of h and
 *  OB_CONFIG_HASH_TOP - h gives every setting's largest and least hash in one collective. */
#define OB_CONFIG_HASH_TOP ((uint64_t) 1 << 62)

/** Most variables the table may hold: the agreement at MPI_Init carries two int64 per variable
 *  in a fixed array (config.c asserts the table fits). */
#define OB_CONFIG_MAX_VARS 64

/** \brief How many variables the table holds (rows 0 .. count-1 of ob_config_doc_at()). */
size_t ob_config_count(void);

/** \brief Must variable \p i have the same value on every rank?  All but OMNIBATCH_DEBUG. */
int ob_config_must_agree(size_t i);

/** \brief The name of variable \p i ("OMNIBATCH_GAIN"), NULL past the last. */
const char *ob_config_name(size_t i);

/**
 * \brief Variable \p i's value in \p cfg, spelt one way whatever spelling set it (on/off,
 *        %.17g, decimal, a choice's name, a path shown escaped and cut, "(unset)").
 */
void ob_config_value(const ob_config *cfg, size_t i, char *buf, size_t size);

/** \brief A hash of variable \p i's value, in [0, OB_CONFIG_HASH_TOP); 0 when it need not agree. */
uint64_t ob_config_hash(const ob_config *cfg, size_t i);

/**
 * \brief The OMNIBATCH_* names of \p envp that are no setting (those ob_config_from_env() warns
 *        about, on rank 0 only), hashed whatever their order, in [0, OB_CONFIG_HASH_TOP);
 *        0 when there are none.  Ranks whose hash is not rank 0's have names of their own.
 */
uint64_t ob_config_unknown_hash(char *const *envp);

/** \brief Warn about each OMNIBATCH_* name of \p envp that is no setting, on this rank. */
void ob_config_warn_unknown(char *const *envp);

/**
 * \brief Rules that need the number of ranks (preload mode, OMNIBATCH_GLOBAL_BATCH given):
 *        MIN_BATCH * P <= GLOBAL_BATCH, MAX_BATCH * P >= GLOBAL_BATCH (when set) and
 *        GRANULARITY <= GLOBAL_BATCH.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_CONFIG with one line naming the variable.
 */
int ob_config_check_ranks(const ob_config *cfg, int nranks);

#endif /* OB_CONFIG_H */
