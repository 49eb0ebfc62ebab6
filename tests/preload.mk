# tests/preload.mk: filled by its owner.
