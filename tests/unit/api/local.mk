# tests/unit/api/: the chunked step's shared words (src/api/api_chunk_words.c),
# on their own: they make no MPI call (built with the MPI compiler for the
# types of struct ob_chunks; MPI is never started), so a node's slots are
# set by hand and a thief's choice is judged exactly.

check_PROGRAMS += %reldir%/check_words
TESTS += %reldir%/check_words
%canon_reldir%_check_words_SOURCES = %reldir%/check_words.c src/api/api_chunk_words.c
%canon_reldir%_check_words_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_words_LDADD = $(OB_CORE_TEST_LDADD)
