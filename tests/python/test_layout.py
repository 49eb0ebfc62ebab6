# Copyright (c) 2026 The omnibatch authors.
"""The package's ctypes mirrors of omnibatch.h's structures have the
header's fields, in its order, with types of the same size: the library
writes omnibatch_step, omnibatch_stats and omnibatch_chunk whole into the
package's copies.

    test_layout.py include/omnibatch.h
"""
import ctypes
import re
import sys

from omnibatch import _library

C_SIZES = {"long": ctypes.sizeof(ctypes.c_long), "double": 8, "int": ctypes.sizeof(ctypes.c_int),
           "uint64_t": 8, "omnibatch_convention": ctypes.sizeof(ctypes.c_int),
           "omnibatch_prior": ctypes.sizeof(ctypes.c_int),
           "omnibatch_ps_staleness": ctypes.sizeof(ctypes.c_int),
           "omnibatch_ps_role": ctypes.sizeof(ctypes.c_int)}
MIRRORS = {"omnibatch_options": _library.Options, "omnibatch_step": _library.CStep,
           "omnibatch_stats": _library.CStats, "omnibatch_chunk": _library.CChunk,
           "omnibatch_ps_options": _library.PSOptions, "omnibatch_ps_task": _library.CPSTask,
           "omnibatch_ps_stats": _library.CPSStats, "omnibatch_ps_worker_stats": _library.CPSWorkerStats}


def header_fields(text, name):
    """(type, field) of each member of `typedef struct name { ... } name;`."""
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name), text, re.S)
    assert body, "%s: not found in the header" % name
    return re.findall(r"^\s+(\w+)\s+(\w+);", body.group(1), re.M)


def main():
    text = open(sys.argv[1]).read()
    for name, mirror in MIRRORS.items():
        want = header_fields(text, name)
        got = [(f, getattr(mirror, f).size) for f, _ in mirror._fields_]
        assert [f for _, f in want] == [f for f, _ in got], \
            "%s: the header's fields %s, the package's %s" % (name, [f for _, f in want],
                                                              [f for f, _ in got])
        for (ctype, field), (_, size) in zip(want, got):
            assert C_SIZES[ctype] == size, "%s.%s: %s in the header, %d bytes in the package" \
                % (name, field, ctype, size)
        print("test_layout: %s: %d fields as in the header" % (name, len(want)))


if __name__ == "__main__":
    main()
