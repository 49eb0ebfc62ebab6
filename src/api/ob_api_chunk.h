/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The inside of work that moves inside a step (options.chunks), shared by
 * its three files, each calling only those below it:
 *   api_chunk.c        omnibatch_next_chunk, a step's start, create and destroy
 *   api_chunk_wire.c   across nodes: a request to a rank of another node, answered
 *                      between its chunks by a take from that node's words
 *   api_chunk_words.c  within a node: the ranks' words in a shared window, changed
 *                      by compare-and-swap (claim from the front, take from the tail)
 * Not installed.
 */
#ifndef OB_API_CHUNK_H
#define OB_API_CHUNK_H

#include <stdint.h>
#include <mpi.h>

#include "ob_chunk.h"

/* A word: generation (4 bits) | next (30 bits) | end (30 bits), positions
 * within the step (a step holds at most OB_CONFIG_BATCH_LIMIT < 2^30
 * samples). */
#define OB_CHUNK_POS_BITS 30
#define OB_CHUNK_POS_MASK ((UINT64_C(1) << OB_CHUNK_POS_BITS) - 1)
#define OB_CHUNK_GEN_SHIFT 60
#define OB_CHUNK_GEN_MASK UINT64_C(0xf)

/* One rank's slot in the node's window, a cache line of its own. */
typedef struct ob_chunk_slot {
    uint64_t range;              /* generation | next | end: the range the rank works now */
    uint64_t done;               /* generation | samples the rank has claimed in the step */
    uint64_t begin_ns;           /* when it began the step (one monotonic clock on a node) */
    uint64_t last;               /* generation | samples of its latest claim (0: none yet) */
    uint64_t last_ns;            /* when it made that claim */
    char pad[64 - 5 * sizeof(uint64_t)];
} ob_chunk_slot;

/* Across nodes (api_chunk_wire.c): who is where, and this rank's asking. */
typedef struct ob_chunk_wire {
    MPI_Comm comm;               /* a duplicate of the context's, for requests and replies */
    int nnodes;                  /* nodes of the context; 1: no wire */
    int mynode;
    int *node_first;             /* nnodes + 1: each node's ranks in node_ranks[first, next first) */
    int *node_ranks;             /* P: the context's ranks, node by node */
    int *asked;                  /* nnodes: asked in this step and answered "none" */
    int helpers;                 /* other nodes a rank asks in a step, at most */
    MPI_Request barrier;         /* the step's closing (MPI_REQUEST_NULL before it) */
} ob_chunk_wire;

struct ob_chunks {
    MPI_Comm node;               /* this node's ranks of the context */
    MPI_Win win;
    ob_chunk_slot *slot;         /* the node's slots, in node rank order */
    int nnode;
    int me;                      /* this rank's index on the node */
    int rank;                    /* this rank in the context */
    int *rank_of;                /* nnode: each node rank's rank in the context */
    long *counts;                /* P: every rank's count in the step (ob_shard_counts()) */
    long *first;                 /* nnode: each node rank's first position in the step */
    long *plan;                  /* nnode: each node rank's count in the step */
    long floor;                  /* least samples of a chunk in the step */
    long floor_set;              /* the floor set, or the automatic one's least (B / (32 P)) */
    int floor_auto;              /* options.chunk_floor 0: the floor follows the chunks' cost */
    ob_chunk_cost cost;          /* this rank's chunks' times in the step, for their fixed part */
    ob_chunk_worth worth;        /* that part in samples' worth, from the steps before */
    double fixed_s;              /* that fixed part (seconds; 0: none measured) at the last step's speed */
    double fixed_b;              /* and the seconds a sample there */
    long floor_cost;             /* the floor that part asked for at the last fit (0: none yet) */
    int whole;                   /* steps in a row that floor took the whole range (ob_chunk_whole_floor()) */
    double quota;                /* the CPU quota this rank is planned on, in cores (0: none) */
    uint64_t cpu_begin_ns;       /* under it, the process's CPU time as the step began */
    uint64_t wall_begin_ns;      /* and the time */
    double busy_wall;            /* its wall over the last OB_CHUNK_BUSY_WINDOW_S (weighted) */
    double busy_cpu;             /* its CPU in that wall */
    int busy;                    /* it spent at least OB_CHUNK_BUSY_SHARE of its quota there */
    long granularity;
    uint64_t seq;                /* steps begun since create */
    uint64_t gen;                /* seq's generation: the words' tag for this step */
    long base;                   /* the step's first position in the epoch's permutation */
    long cap;                    /* this rank's largest chunk in the step */
    int holder;                  /* the context rank whose range this rank's word holds now */
    long own;                    /* samples claimed from its own range */
    long done;                   /* samples claimed in all */
    long chunks;                 /* chunks handed out in the step */
    long last;                   /* samples of this rank's latest claim in the step (0: none) */
    long prev;                   /* samples of the claim before it in the step (0: none) */
    int slowed;                  /* the latest claim ran slower than the step before it (ob_words_slowed()) */
    int changed;                 /* a claim of the step was slowed by more than its fixed part */
    long first_done;             /* samples of the step's first claim, once done */
    uint64_t first_ns;           /* when it was done */
    int sped;                    /* a claim of the step ran faster than the step before it (ob_words_faster()) */
    long sped_done;              /* the samples claimed before that claim */
    uint64_t sped_ns;            /* when it was made */
    uint64_t end_ns;             /* when the latest claim was done */
    uint64_t last_ns;            /* when it made it */
    int over;                    /* count 0 answered in the step */
    int asleep;                  /* OMNIBATCH_WAIT=sleep: nap while waiting on the wire */
    ob_chunk_wire wire;
};

/* A thief: its rate (samples per second claimed in the step) and its plan,
 * from which a rank without a measure yet is given a rate; whether its CPU
 * quota bounds that rate (then it only takes a tail its owner is stalled on:
 * ob_words_share()). */
typedef struct ob_chunk_thief {
    double rate;
    long plan;
    int quota_bound;
} ob_chunk_thief;

/* api_chunk_words.c */

/**
 * \brief Whether this rank's latest chunk, done at \p now, ran at less than half its pace in the
 *        step before it (its chunks' fixed part counted): it slowed down inside the step.  0
 *        before the step's second chunk.
 */
int ob_words_slowed(const struct ob_chunks *k, uint64_t now);

/** \brief Whether this rank's latest claim, done at \p now, ran at more than OB_WORDS_SLOWER
 *        times its pace in the step before it, its first claim not counted (ob_chunk_faster()):
 *        it sped up inside the step. */
int ob_words_faster(const struct ob_chunks *k, uint64_t now);

/** \brief \p n samples rounded up to whole granules. */
long ob_words_granules(const struct ob_chunks *k, long n);

/** \brief A chunk from the front of this rank's word (one granule when k->slowed): its size, 0
 *  when the word is empty. */
long ob_words_claim(struct ob_chunks *k, long *start);

/** \brief This rank as a thief now: its rate in the step and its plan. */
ob_chunk_thief ob_words_thief(const struct ob_chunks *k, uint64_t now);

/**
 * \brief For \p thief, take a share of the tail of the node rank most behind (skipping node
 *        rank \p skip, -1 for none): positions [*start, *start + *count) of the step, from
 *        \p *from (a context rank).
 * \return 1 when a share was taken, 0 when none reaches the floor.
 */
int ob_words_take(struct ob_chunks *k, const ob_chunk_thief *thief, int skip, long *start, long *count,
                  int *from);

/** \brief This rank's word (empty) now holds [start, start + count), taken from \p from. */
void ob_words_hold(struct ob_chunks *k, long start, long count, int from);

/** \brief The step begins: this rank's slot tagged with the step's generation, its word its
 *  range in the plan (or what a thief left of it). */
void ob_words_begin(struct ob_chunks *k);

/** \brief After a claim: the samples this rank has claimed, and its latest claim with its time,
 *  for the thieves' rates. */
void ob_words_done(struct ob_chunks *k);

/* api_chunk_wire.c */

/** \brief Collective on c->comm (\p k->node set): the nodes, their ranks, the duplicate; an MPI
 *  code (then the wire is off: nnodes 1). */
int ob_wire_open(struct ob_chunks *k, MPI_Comm comm, int nranks);

/** \brief Give back what ob_wire_open() took (collective on its duplicate). */
void ob_wire_free(struct ob_chunks *k);

/** \brief The step begins: no node asked yet. */
void ob_wire_begin(struct ob_chunks *k);

/** \brief Answer the requests that have come, each with a take from this node's words. */
int ob_wire_serve(struct ob_chunks *k);

/** \brief Ask the other nodes (this rank's helpers) for a share, answering requests while
 *  waiting: 1 with a share now in this rank's word, 0 when none had one; *mpi_rc on failure. */
int ob_wire_steal(struct ob_chunks *k, int *mpi_rc);

/** \brief None is left for this rank: wait until every rank of the context says so, answering
 *  requests meanwhile (so that no request goes unanswered).  An MPI code. */
int ob_wire_close(struct ob_chunks *k);

#endif /* OB_API_CHUNK_H */
