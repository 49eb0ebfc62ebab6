# Copyright (c) 2026 The omnibatch authors.
"""Finding libomnibatch and declaring its C API to ctypes.

The library is looked for, in this order:

1. in the process itself (``LD_PRELOAD``, or linked into the interpreter or
   an extension): that copy is the one whose PMPI layer sees the MPI calls,
   so a second copy must never be loaded beside it;
2. the file named by ``OMNIBATCH_LIBRARY`` (a build tree, another install);
3. the library ``make install`` put beside this package (its path is
   written into ``_build.py`` at build time).

None found: :data:`LIB` is ``None`` and the package splits the batch equally
by itself.  A library whose interface does not match this package (another
major version, or another minor while the major is 0, as omnibatch_dl.h
checks) is not used: :data:`PROBLEM` says why.
"""
import ctypes
import os

try:
    from . import _build
except ImportError:                     # a source tree that was never built
    _build = None

BUILD_VERSION = getattr(_build, "VERSION", None)
INSTALLED_LIBRARY = getattr(_build, "LIBRARY", None)

SUCCESS = 0
ERR_ARG = 1
ERR_STATE = 6

c_long_p = ctypes.POINTER(ctypes.c_long)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)


class Options(ctypes.Structure):
    """omnibatch_options (omnibatch.h), field for field."""
    _fields_ = [("min_batch", ctypes.c_long), ("max_batch", ctypes.c_long),
                ("granularity", ctypes.c_long), ("gain", ctypes.c_double),
                ("deadband", ctypes.c_double), ("forget", ctypes.c_double),
                ("period", ctypes.c_long), ("warmup", ctypes.c_long),
                ("convention", ctypes.c_int), ("prior", ctypes.c_int),
                ("adaptive", ctypes.c_int), ("verify", ctypes.c_int),
                ("seed", ctypes.c_uint64), ("react", ctypes.c_int),
                ("chunks", ctypes.c_int), ("chunk_floor", ctypes.c_long)]


class CStep(ctypes.Structure):
    """omnibatch_step (omnibatch.h), field for field.

    ``scale`` is the field a newer library appends (the factor of the
    context's convention).  A library without it leaves the NaN the package
    writes there before each call, and the package computes the factor.
    """
    _fields_ = [(name, ctypes.c_long) for name in
                ("epoch", "step", "global_step", "start", "count", "total")] + \
               [("scale", ctypes.c_double)]


class CStats(ctypes.Structure):
    """omnibatch_stats (omnibatch.h), field for field."""
    _fields_ = [(name, ctypes.c_long) for name in ("steps", "exchanges", "decisions", "changes")] + \
               [(name, ctypes.c_double) for name in
                ("compute_s", "blocked_s", "compute_total_s", "blocked_total_s", "alpha", "beta",
                 "predicted_step_s", "optimum_step_s")] + \
               [("parked_steps", ctypes.c_long), ("early_exchanges", ctypes.c_long),
                ("react_total_s", ctypes.c_double)] + \
               [(name, ctypes.c_long) for name in ("chunks", "samples_taken", "samples_given")]


class CChunk(ctypes.Structure):
    """omnibatch_chunk (omnibatch.h), field for field."""
    _fields_ = [("start", ctypes.c_long), ("count", ctypes.c_long), ("owner", ctypes.c_int),
                ("done", ctypes.c_long), ("scale", ctypes.c_double)]


class PSOptions(ctypes.Structure):
    """omnibatch_ps_options (omnibatch.h), field for field."""
    _fields_ = [("servers", ctypes.c_int), ("lr", ctypes.c_double), ("momentum", ctypes.c_double),
                ("weight_decay", ctypes.c_double), ("ref_batch", ctypes.c_long),
                ("staleness", ctypes.c_int), ("max_staleness", ctypes.c_long),
                ("adaptive", ctypes.c_int), ("min_batch", ctypes.c_long),
                ("max_batch", ctypes.c_long), ("granularity", ctypes.c_long),
                ("gain", ctypes.c_double), ("deadband", ctypes.c_double),
                ("forget", ctypes.c_double), ("period", ctypes.c_long), ("warmup", ctypes.c_long),
                ("epochs", ctypes.c_long), ("max_pushes", ctypes.c_long), ("seed", ctypes.c_uint64),
                ("max_global_batch", ctypes.c_long)]


class CPSTask(ctypes.Structure):
    """omnibatch_ps_task (omnibatch.h), field for field."""
    _fields_ = [(name, ctypes.c_long) for name in ("epoch", "start", "count", "version")] + \
               [("done", ctypes.c_int)]


class CPSWorkerStats(ctypes.Structure):
    """omnibatch_ps_worker_stats (omnibatch.h), field for field."""
    _fields_ = [("rank", ctypes.c_int)] + \
               [(name, ctypes.c_long) for name in
                ("pushes", "applied", "dropped", "samples", "batch")] + \
               [("staleness_mean", ctypes.c_double), ("staleness_p99", ctypes.c_long),
                ("staleness_max", ctypes.c_long)] + \
               [(name, ctypes.c_double) for name in
                ("pushes_per_s", "samples_per_s", "compute_s", "alpha", "beta")]


class CPSStats(ctypes.Structure):
    """omnibatch_ps_stats (omnibatch.h), field for field."""
    _fields_ = [("role", ctypes.c_int), ("index", ctypes.c_int)] + \
               [(name, ctypes.c_long) for name in
                ("version", "pushes", "dropped", "epoch", "slices", "decisions", "changes")] + \
               [(name, ctypes.c_double) for name in
                ("elapsed_s", "busy_s", "busy_fraction", "compute_s", "wait_s")] + \
               [("finished", ctypes.c_int)]


def _handle_type():
    """The C type of MPI_Comm and MPI_Datatype: a pointer with Open MPI, an int with MPICH."""
    try:
        from mpi4py import MPI
    except ImportError:
        return ctypes.c_void_p
    return ctypes.c_void_p if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_void_p) \
        else ctypes.c_int


def _set(lib, signatures):
    """Declare each function the library has: one of another interface lacks some, and is
    refused by the version check that follows (load())."""
    for name, argtypes in signatures.items():
        fn = getattr(lib, name, None)
        if fn is None:
            continue
        fn.argtypes = argtypes
        fn.restype = ctypes.c_int


def declare_handles(lib):
    """Declare the functions that take MPI handles.  Apart, and only once a
    communicator is in hand: asking mpi4py for the handles' type imports
    mpi4py.MPI, which initialises MPI, and importing omnibatch must not."""
    handle = _handle_type()
    _set(lib, {
        "omnibatch_create": [handle, ctypes.c_long, ctypes.c_long, ctypes.POINTER(Options),
                             c_void_pp],
        "omnibatch_allreduce_gradient": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_int, handle],
        "omnibatch_ps_create": [handle, ctypes.c_void_p, ctypes.c_long, handle, ctypes.c_long,
                                ctypes.c_long, ctypes.POINTER(PSOptions), c_void_pp],
    })


def _declare(lib):
    """Set argtypes and restype of the functions of omnibatch.h without MPI handles."""
    ctx = ctypes.c_void_p
    signatures = {
        "omnibatch_options_init": [ctypes.POINTER(Options)],
        "omnibatch_destroy": [c_void_pp],
        "omnibatch_next_step": [ctx, ctypes.POINTER(CStep)],
        "omnibatch_next_chunk": [ctx, ctypes.POINTER(CChunk)],
        "omnibatch_compute_begin": [ctx],
        "omnibatch_compute_end": [ctx],
        "omnibatch_get_plan": [ctx, c_long_p, ctypes.c_int],
        "omnibatch_set_plan": [ctx, c_long_p, ctypes.c_int],
        "omnibatch_permutation": [ctx, ctypes.c_long, c_long_p],
        "omnibatch_get_stats": [ctx, ctypes.POINTER(CStats)],
        "omnibatch_state_size": [ctx, ctypes.POINTER(ctypes.c_size_t)],
        "omnibatch_get_state": [ctx, ctypes.c_void_p, ctypes.c_size_t],
        "omnibatch_set_state": [ctx, ctypes.c_void_p, ctypes.c_size_t],
        "omnibatch_save": [ctx, ctypes.c_char_p],
        "omnibatch_restore": [ctx, ctypes.c_char_p],
        "omnibatch_ps_options_init": [ctypes.POINTER(PSOptions)],
        "omnibatch_ps_role_of": [ctx, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)],
        "omnibatch_ps_serve": [ctx, ctypes.c_long, ctypes.POINTER(ctypes.c_int)],
        "omnibatch_ps_pull": [ctx, ctypes.POINTER(CPSTask)],
        "omnibatch_ps_push": [ctx, ctypes.c_void_p, ctypes.POINTER(CPSTask)],
        "omnibatch_ps_get_plan": [ctx, c_long_p, ctypes.c_int],
        "omnibatch_ps_set_plan": [ctx, c_long_p, ctypes.c_int],
        "omnibatch_ps_get_stats": [ctx, ctypes.POINTER(CPSStats)],
        "omnibatch_ps_get_worker_stats": [ctx, ctypes.c_int, ctypes.POINTER(CPSWorkerStats)],
        "omnibatch_ps_permutation": [ctx, ctypes.c_long, c_long_p],
        "omnibatch_ps_save": [ctx, ctypes.c_char_p],
        "omnibatch_ps_restore": [ctx, ctypes.c_char_p],
        "omnibatch_ps_destroy": [c_void_pp],
    }
    _set(lib, signatures)
    lib.omnibatch_strerror.argtypes = [ctypes.c_int]
    lib.omnibatch_strerror.restype = ctypes.c_char_p
    lib.omnibatch_last_error.argtypes = []
    lib.omnibatch_last_error.restype = ctypes.c_char_p
    lib.omnibatch_get_version.argtypes = []
    lib.omnibatch_get_version.restype = ctypes.c_uint


def version_string(code):
    """"major.minor.patch" of an OMNIBATCH_VERSION number."""
    return "%d.%d.%d" % ((code >> 16) & 0xff, (code >> 8) & 0xff, code & 0xff)


def _compatible(theirs, ours):
    """The rule of omnibatch_dl.h: same major, and same minor while the major is 0."""
    a, b = theirs.split(".")[:2], ours.split(".")[:2]
    return a[0] == b[0] and (a[0] != "0" or a[1] == b[1])


def _candidates():
    """(where, how to open it) in the order of the module's docstring."""
    yield "the process", None
    env = os.environ.get("OMNIBATCH_LIBRARY")
    if env:
        yield "OMNIBATCH_LIBRARY=%s" % env, env
    if INSTALLED_LIBRARY:
        yield INSTALLED_LIBRARY, INSTALLED_LIBRARY


def _open(path):
    """The library at path (None: the process), or None when absent."""
    if path is not None and not os.path.exists(path):
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    try:
        lib.omnibatch_create
        lib.omnibatch_get_version
    except AttributeError:
        return None
    return lib


def load():
    """(library or None, where it came from, problem line or None)."""
    problems = []
    for where, path in _candidates():
        lib = _open(path)
        if lib is None:
            if path is not None and where.startswith("OMNIBATCH_LIBRARY"):
                problems.append("%s: not a loadable libomnibatch" % where)
            continue
        _declare(lib)
        theirs = version_string(lib.omnibatch_get_version())
        if BUILD_VERSION and not _compatible(theirs, BUILD_VERSION):
            problems.append("%s: libomnibatch %s does not match this package (%s)"
                            % (where, theirs, BUILD_VERSION))
            if path is None:            # never a second copy beside the one in the process
                break
            continue
        return lib, where, None
    return None, None, "; ".join(problems) or None


LIB, WHERE, PROBLEM = load()
