# src/support.mk: filled by its owner.
