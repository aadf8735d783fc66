/*
 * settings.h - the XCHG_* settings (src/core/settings.c): their
 * definitions, the agreed values a communicator's state holds, and what
 * the layers above hand core to read them. Included by state.h.
 */
#ifndef XCHG_CORE_SETTINGS_H
#define XCHG_CORE_SETTINGS_H

#include "xchg.h"
#include <stddef.h>
#include <stdint.h>

/* The XCHG_* environment settings (core's: the table in settings.c; an
 * algorithm's own: a definition in its file), read once per
 * communicator when its state is made and agreed there: every rank holds
 * rank 0's values. The few variables read elsewhere (XCHG_TUNING_FILE,
 * whose contents select.c agrees on; the simulation's and the tests'
 * own) are listed in docs/settings.md, which tests/docs_settings.py
 * checks against every getenv. */
typedef enum xchg_setting_id {
    XCHG_SET_ALLTOALLV_ALGO,
    XCHG_SET_SPARSE_ALGO,
    XCHG_SET_THROTTLE,
    XCHG_SET_AUTO_MIN_P,
    XCHG_SET_AUTO_REFRESH,
    XCHG_SET_MAX_TEMP_BYTES,
    XCHG_SET_RANKS_PER_NODE,
    XCHG_SET_CHECK,
    XCHG_SET_VERBOSE,
    XCHG_SET_RECORD,
    XCHG_SET_RECORD_MAX,
    XCHG_SET_NEIGHBOR_ALGO,
    XCHG_SET_MAX_INFLIGHT,
    XCHG_SET_SHM_BYTES,
    XCHG_SET_SETUP_AT,
    XCHG_SETTING_COUNT
} xchg_setting_id;

/* How a setting's value is written. */
typedef enum xchg_setting_kind {
    XCHG_KIND_INT, XCHG_KIND_BYTES, XCHG_KIND_ALGO, XCHG_KIND_SPARSE_ALGO,
    XCHG_KIND_NEIGHBOR_ALGO, XCHG_KIND_BARRIER, XCHG_KIND_PATH
} xchg_setting_kind;

/* One setting: its variable, kind, range and default. The range's text is
 * made from these fields, so messages and docs/settings.md (compared by
 * tests/docs_settings.py) say what is accepted. Core's own are settings.c's
 * table; an algorithm's own setting is a definition in its file, named by
 * its registry entry (.settings), read and agreed with core's. */
typedef struct xchg_setting_def {
    const char *name;
    xchg_setting_kind kind;
    int64_t min, max, dflt; /* INT, BYTES; the value where unset */
    const char *zero_means; /* 0 is valid too (below min): what it means; NULL: not valid */
    const char *note;       /* appended to the range, NULL: none */
    const char *dflt_text;  /* the default in words, NULL: dflt */
} xchg_setting_def;

/* At most this many algorithms' own settings (one more would not be read:
 * tests/docs_settings.py would find it missing from the table). */
enum { XCHG_ALGO_SETTINGS_MAX = 16 };

typedef struct xchg_settings {
    xchg_algo alltoallv_algo;     /* AUTO when unset, INVALID for an unknown name */
    xchg_sparse_algo sparse_algo; /* AUTO when unset, INVALID for an unknown name */
    char alltoallv_algo_text[64], sparse_algo_text[64]; /* as set, for messages */
    int throttle;                 /* requests in flight (scattered, the model) */
    int max_inflight;             /* XCHG_MAX_INFLIGHT: requests a direct algorithm posts at once; 0: no bound */
    long auto_min_p;              /* auto's statistics from this many ranks */
    long auto_refresh;            /* most auto calls between two refreshes */
    size_t max_temp_bytes;        /* set, or the smallest default of all ranks */
    long ranks_per_node;          /* hierarchical; 0: shared-memory nodes */
    int check;                    /* XCHG_CHECK=1: the check mode */
    int verbose;                  /* XCHG_VERBOSE: 1 auto's choices, 2 every change, 3 every agreement */
    int record;                   /* XCHG_RECORD set on rank 0: record shapes */
    int record_max;               /* XCHG_RECORD_MAX: shapes per communicator */
    char record_path[1024];       /* XCHG_RECORD as this rank has it (rank 0 writes) */
    xchg_neighbor_algo neighbor_algo; /* AUTO when unset, INVALID for an unknown name */
    char neighbor_algo_text[64];
    int64_t shm_bytes;            /* XCHG_SHM_BYTES: data bytes per rank per half of the node window */
    int shm_bytes_set;            /* ... set, not its default */
    long setup_at;                /* XCHG_SETUP_AT: the auto call that sets up (0: when it pays) */
    /* The tuning table (XCHG_TUNING_FILE) every rank read when the state
     * was made: its checksum where all ranks' agree (0: no table, or not
     * the same everywhere), and whether they differ. */
    uint64_t table_checksum;
    int table_differ;
    /* The algorithms' own settings (xchg_setting_of reads one): their
     * definitions (xchg_algo_names.algo_setting; NULL past the last), kept
     * here so that a read is a short scan, and their agreed values. */
    const xchg_setting_def *algo_def[XCHG_ALGO_SETTINGS_MAX];
    int64_t algo_value[XCHG_ALGO_SETTINGS_MAX];
} xchg_settings;

/* The agreed value of an algorithm's own setting d, or d's default where
 * unset (or d is no setting of s's). */
int64_t xchg_setting_of(const xchg_settings *s, const xchg_setting_def *d);

/* What the settings need from the layers above (given by the entry
 * points): algorithm names to ids and back, for XCHG_ALLTOALLV_ALGO,
 * XCHG_SPARSE_ALGO and XCHG_NEIGHBOR_ALGO, the checksum of the tuning
 * table this rank reads (select/table.c; NULL or 0: none) and the
 * algorithms' own settings (their registries). */
typedef struct xchg_algo_names {
    xchg_algo (*alltoallv)(const char *name);
    xchg_sparse_algo (*sparse)(const char *name);
    const char *(*alltoallv_name)(xchg_algo algo);
    const char *(*sparse_name)(xchg_sparse_algo algo);
    xchg_neighbor_algo (*neighbor)(const char *name);
    const char *(*neighbor_name)(xchg_neighbor_algo algo);
    unsigned long long (*table_checksum)(void);
    /* The algorithms' own settings, i = 0, 1, ... (NULL past the last),
     * in the same order on every rank; NULL: none. */
    const xchg_setting_def *(*algo_setting)(int i);
} xchg_algo_names;

/* Reads the settings and agrees on them (collective over comm: one
 * MPI_Allreduce), the tuning table's checksum included (s->table_checksum,
 * s->table_differ); rank 0 warns of rejected or differing values on stderr.
 * The same allreduce reduces the caller's extra[0..nextra) (at most 4) by
 * MPI_MAX, in place, so a caller's own agreement costs no latency chain of
 * its own. */
/* This rank's own values, read without agreeing them (no communication):
 * what a communicator's first calls go by before its state is set up
 * (select/phase.c), where rank 0's values are not yet known. all: every
 * setting; else only those a first call needs (whether it sets up, and
 * XCHG_VERBOSE), the others at their defaults, so that a communicator
 * used once reads five variables, not every one. */
void xchg_settings_read_local(const xchg_algo_names *names, xchg_settings *s, int all);
int xchg_settings_agree(MPI_Comm comm, const xchg_algo_names *names, xchg_settings *s,
                        int64_t extra[], int nextra);
/* Setting i (core's, then the algorithms'; 0 past the last): its
 * name, what it accepts and its default, in words (the docs' table is
 * checked against these: tests/docs_settings.py). */
int xchg_setting_describe(int i, const xchg_algo_names *names, const char **name, char *range,
                          size_t rlen, char *dflt, size_t dlen);

#endif /* XCHG_CORE_SETTINGS_H */
