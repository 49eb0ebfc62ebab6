# Generate one unit's wrappers from wrappers.spec (see its header):
#   awk -v unit=collectives -f genwrappers.awk wrappers.spec > collectives.inc
function trim(s) {
    gsub(/^[ \t]+|[ \t]+$/, "", s)
    return s
}
# The argument list of a parameter list: the last identifier of each.
function args_of(params,    n, p, i, out, name) {
    n = split(params, p, ",")
    out = ""
    for (i = 1; i <= n; i++) {
        name = trim(p[i])
        sub(/\[\]$/, "", name)
        sub(/^.*[ *]/, "", name)
        out = out (i > 1 ? ", " : "") name
    }
    return out
}
BEGIN {
    FS = "|"
    if (unit == "") {
        print "genwrappers.awk: set -v unit=NAME" > "/dev/stderr"
        exit 2
    }
    print "/* Generated from mpi_wrappers/wrappers.spec by genwrappers.awk: do not edit. */"
}
/^[ \t]*(#|$)/ { next }
NF != 5 {
    printf "wrappers.spec:%d: expected 5 fields separated by |, got %d\n", NR, NF > "/dev/stderr"
    failed = 1
    exit 1
}
trim($1) != unit { next }
{
    lang = trim($2); name = trim($3); impl = trim($4); params = trim($5)
    rows++
    if (lang == "c") {
        printf "\nOB_WRAPPER int %s(%s)\n{\n    return %s(%s);\n}\n", name, params, impl, args_of(params)
    } else if (lang == "f") {
        lower = tolower(name)
        printf "\nOB_WRAPPER void %s(%s) __attribute__((alias(\"%s\")));\n", name, params, impl
        printf "OB_WRAPPER void %s(%s) __attribute__((alias(\"%s\")));\n", lower, params, impl
        printf "OB_WRAPPER void %s_(%s) __attribute__((alias(\"%s\")));\n", lower, params, impl
        printf "OB_WRAPPER void %s__(%s) __attribute__((alias(\"%s\")));\n", lower, params, impl
        # Open MPI's mpi_f08 module: MPI_X_f08, gfortran's mpi_x_f08_ (see fortran.c).
        printf "#if defined(OPEN_MPI)\n"
        printf "OB_WRAPPER void %s_f08_(%s) __attribute__((alias(\"%s\")));\n", lower, params, impl
        printf "#endif\n"
    } else {
        printf "wrappers.spec:%d: language '%s': expected c or f\n", NR, lang > "/dev/stderr"
        failed = 1
        exit 1
    }
}
END {
    if (!failed && rows == 0) {
        printf "genwrappers.awk: no wrapper of unit '%s' in the spec\n", unit > "/dev/stderr"
        exit 1
    }
}
