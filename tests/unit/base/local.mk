# tests/unit/base/: errors and the settings table (its text checked against
# the configuration page and the man page).

OB_UNIT_BASE = %reldir%/check_error %reldir%/check_config
check_PROGRAMS += $(OB_UNIT_BASE)
TESTS += $(OB_UNIT_BASE) %reldir%/check_man.sh
EXTRA_DIST += %reldir%/check_man.sh

%canon_reldir%_check_error_SOURCES = %reldir%/check_error.c
%canon_reldir%_check_error_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_error_LDADD = $(OB_CORE_TEST_LDADD)

%canon_reldir%_check_config_SOURCES = %reldir%/check_config.c
%canon_reldir%_check_config_CPPFLAGS = $(OB_TEST_CPPFLAGS) \
	-DOB_TEST_CONFIG_PAGE='"$(abs_top_srcdir)/docs/configuration.md"'
%canon_reldir%_check_config_CFLAGS = $(OB_CORE_TEST_CFLAGS)
%canon_reldir%_check_config_LDADD = $(OB_CORE_TEST_LDADD)
