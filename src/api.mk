# src/api.mk: filled by its owner.
