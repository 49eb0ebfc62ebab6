# tests/control.mk: filled by its owner.
