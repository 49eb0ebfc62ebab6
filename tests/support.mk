# tests/support.mk: filled by its owner.
