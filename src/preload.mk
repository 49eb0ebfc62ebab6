# src/preload.mk: filled by its owner.
