# tests/api.mk: filled by its owner.
